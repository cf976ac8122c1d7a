// The Operations view: the live list of operations (read every second), filtered by status, wallet,
// collection and chain, each with its transactions (fee bumps) and error.
// Everything from the API is rendered as text (preact escapes it): no innerHTML.
import { BlockLine, ErrorBox, POLL_MS, View, api, html, short, when } from "./shared.mjs";

export class Operations extends View {
  constructor(props) {
    super(props);
    this.pollMs = POLL_MS; // new and changed operations within 2 s
    this.filters = { status: "", wallet: "", collection: "", chain: "" };
    this.state = { ...this.state, older: [], cursor: undefined, chains: [] };
  }
  componentDidMount() {
    super.componentDidMount();
    // The chains the service serves, for the chain selector (GET /chains).
    api("GET", "/chains")
      .then(({ chains }) => this.alive && this.setState({ chains }))
      .catch(() => {});
  }
  blockOf(data) {
    return data.blockNumber;
  }
  query(cursor) {
    const params = new URLSearchParams({ limit: "50" });
    for (const [k, v] of Object.entries(this.filters)) if (v) params.set(k, v);
    if (cursor) params.set("cursor", cursor);
    return `/nft/operations?${params}`;
  }
  load() {
    return api("GET", this.query());
  }
  async more() {
    const cursor = this.state.cursor ?? this.state.data?.cursor;
    if (!cursor) return;
    try {
      const page = await api("GET", this.query(cursor));
      this.setState({ older: [...this.state.older, ...page.operations], cursor: page.cursor ?? null });
    } catch (error) {
      this.setState({ error });
    }
  }
  filter(event) {
    event.preventDefault();
    const form = new FormData(event.target);
    this.filters = {
      status: form.get("status"),
      wallet: String(form.get("wallet")).trim(),
      collection: String(form.get("collection")).trim(),
      chain: form.get("chain") ?? "",
    };
    this.setState({ older: [], cursor: undefined, data: null });
    this.reload();
  }
  render(_props, { data, error, block, older, cursor, chains }) {
    const seen = new Set();
    const rows = [...(data?.operations ?? []), ...older].filter(
      (op) => !seen.has(op.operationId) && seen.add(op.operationId),
    );
    const hasMore = cursor === undefined ? Boolean(data?.cursor) : Boolean(cursor);
    return html`<section aria-labelledby="view-title">
      <h2 id="view-title" tabindex="-1">Operations</h2>
      <${BlockLine} block=${block} />
      <form class="inline" onSubmit=${(e) => this.filter(e)}>
        <label
          >Status
          <select name="status">
            <option value="">any</option>
            ${["queued", "sent", "confirmed", "failed"].map((s) => html`<option value=${s}>${s}</option>`)}
          </select>
        </label>
        <label>Wallet (signer address)<input name="wallet" size="44" autocomplete="off" /></label>
        <label>Collection<input name="collection" size="44" autocomplete="off" /></label>
        <label
          >Chain
          <select name="chain">
            <option value="">any</option>
            ${chains.map((c) => html`<option value=${c.id}>${c.name} (${c.id})</option>`)}
          </select>
        </label>
        <button class="action" type="submit">Filter</button>
      </form>
      <${ErrorBox} error=${error} />
      <p class="block" aria-live="polite">
        ${data ? `${rows.length} shown, live (refreshed every second)` : "Loading…"}
      </p>
      <table>
        <caption class="skip">
          Operations, newest first
        </caption>
        <thead>
          <tr>
            <th scope="col">Created</th>
            <th scope="col">Chain</th>
            <th scope="col">Operation</th>
            <th scope="col">Status</th>
            <th scope="col">From</th>
            <th scope="col">Collection</th>
            <th scope="col">Nonce</th>
            <th scope="col">Block</th>
            <th scope="col">Transactions</th>
            <th scope="col">Error</th>
          </tr>
        </thead>
        <tbody>
          ${rows.map(
            (op) =>
              html`<tr key=${op.operationId} data-operation-id=${op.operationId}>
                <td>${when(op.createdAt)}</td>
                <td data-chain=${op.chainId ?? ""}>${op.chainId ?? ""}</td>
                <td>${op.operation}</td>
                <td class=${`status-${op.status}`} data-status=${op.status}>${op.status}</td>
                <td class="mono" title=${op.from}>${short(op.from)}</td>
                <td class="mono" title=${op.contractAddress ?? ""}>${short(op.contractAddress)}</td>
                <td>${op.nonce ?? ""}</td>
                <td>${op.blockNumber ?? ""}</td>
                <td>
                  ${
                    op.transactionHashes.length === 0
                      ? "none"
                      : html`<details>
                          <summary>
                            ${op.transactionHashes.length}
                            tx${
                              op.transactionHashes.length > 1
                                ? ` (${op.transactionHashes.length - 1} fee bump${op.transactionHashes.length > 2 ? "s" : ""})`
                                : ""
                            }
                          </summary>
                          <ol>
                            ${op.transactionHashes.map((hash) => html`<li class="mono">${hash}</li>`)}
                          </ol>
                        </details>`
                  }
                </td>
                <td>${op.error ? `${op.error.code}: ${op.error.message}` : ""}</td>
              </tr>`,
          )}
        </tbody>
      </table>
      ${hasMore ? html`<p><button class="secondary" onClick=${() => this.more()}>Older operations</button></p>` : null}
    </section>`;
  }
}
