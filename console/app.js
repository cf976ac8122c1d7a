// The operators' console: preact + htm from node_modules, no build step. It calls only the public
// API, with the key it was given, kept in this tab's sessionStorage (never a URL, localStorage or a
// log). Everything from the API is rendered as text (preact escapes it): no innerHTML anywhere.
import { Component, render } from "./vendor/preact.mjs";
import {
  ApiError,
  BlockLine,
  ErrorBox,
  POLL_MS,
  View,
  api,
  html,
  session,
  short,
  weiToEther,
  when,
} from "./shared.mjs";
import { SCOPES } from "./scopes.mjs";
import { Approvals } from "./approvals.mjs";

let chainList;
/** The chains the service serves (GET /chains), asked once per page. */
function configuredChains() {
  chainList ??= api("GET", "/chains")
    .then(({ chains }) => chains)
    .catch(() => {
      chainList = undefined;
      return [];
    });
  return chainList;
}

/** `?chain=` for a view's chain; none with one chain configured. */
const chainQuery = (chain, first = "?") => (chain ? `${first}chain=${encodeURIComponent(chain)}` : "");

/** The chain selector of a view acting on one chain: shown only when several are configured. */
function ChainSelect({ chains, value, onChange }) {
  if (!chains || chains.length < 2) return null;
  return html`<label
    >Chain
    <select name="chain" value=${value} onChange=${(e) => onChange(e.target.value)}>
      ${chains.map((c) => html`<option value=${c.id} selected=${c.id === value}>${c.name} (${c.id})</option>`)}
    </select></label
  >`;
}

const list = (text) =>
  text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);

// ---------------------------------------------------------------- Operations

class Operations extends View {
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

// ---------------------------------------------------------------- Wallets

class Wallets extends View {
  async load() {
    // Several chains: balances, nonces and policies are per chain, of the chain selected (the first at first).
    const chains = await configuredChains();
    if (chains.length > 1 && !chains.some((c) => c.id === this.chain)) this.chain = chains[0].id;
    const data = await api("GET", `/wallets${chainQuery(chains.length > 1 ? this.chain : undefined)}`);
    return { ...data, chains, chain: this.chain };
  }
  pickChain(chain) {
    this.chain = chain;
    this.reload();
  }
  create(event) {
    event.preventDefault();
    const form = event.target;
    const data = new FormData(form);
    const body = { kind: "local", label: String(data.get("label")).trim() };
    const privateKey = String(data.get("privateKey") || "").trim();
    const keystore = String(data.get("keystore") || "").trim();
    if (privateKey) body.privateKey = privateKey;
    if (keystore) {
      try {
        body.keystore = JSON.parse(keystore);
      } catch {
        this.setState({ actionError: new ApiError(400, "", "The keystore is not JSON") });
        return;
      }
      body.password = String(data.get("password") || "");
    }
    this.act(async () => {
      await api("POST", "/wallets", body);
      form.reset(); // the key and the password leave the page
    });
  }
  render(_props, { data, error, block, actionError, busy }) {
    return html`<section aria-labelledby="view-title">
      <h2 id="view-title" tabindex="-1">Wallets</h2>
      <${BlockLine} block=${block} />
      <${ChainSelect} chains=${data?.chains} value=${data?.chain} onChange=${(c) => this.pickChain(c)} />
      <${ErrorBox} error=${error} />
      ${
        data
          ? html`<table>
              <thead>
                <tr>
                  <th scope="col">Label</th>
                  <th scope="col">Address</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Balance</th>
                  <th scope="col">Next nonce</th>
                  <th scope="col">Unfinished</th>
                  <th scope="col">Spent today / limit</th>
                  <th scope="col">Low balance</th>
                </tr>
              </thead>
              <tbody>
                ${data.wallets.map((w) => {
                  // A chain that does not answer: no balance, no nonce (chainStatus down).
                  const policy = w.policy ?? { lowBalance: null, dailySpendLimit: null, spentToday: "0" };
                  const low =
                    policy.lowBalance !== null && w.balance != null && BigInt(w.balance) < BigInt(policy.lowBalance);
                  return html`<tr key=${w.address}>
                    <td>${w.label}</td>
                    <td class="mono">${w.address}</td>
                    <td>${w.kind}</td>
                    <td>${weiToEther(w.balance)}</td>
                    <td>${w.nextNonce ?? ""}</td>
                    <td>${w.unfinishedOperations ?? ""}</td>
                    <td>
                      ${weiToEther(policy.spentToday)} /
                      ${policy.dailySpendLimit === null ? "no limit" : weiToEther(policy.dailySpendLimit)}
                    </td>
                    <td>${policy.lowBalance === null ? "not set" : low ? "LOW" : "ok"}</td>
                  </tr>`;
                })}
              </tbody>
            </table>`
          : null
      }
      <h3>Create or import a wallet</h3>
      <form class="inline" onSubmit=${(e) => this.create(e)} autocomplete="off">
        <label>Label<input name="label" required pattern="[A-Za-z0-9][A-Za-z0-9_.\\-]{0,63}" /></label>
        <label>Private key to import (optional)<input name="privateKey" type="password" size="40" /></label>
        <label>Or a JSON keystore (optional)<textarea name="keystore" rows="2" cols="30"></textarea></label>
        <label>Keystore password<input name="password" type="password" /></label>
        <button class="action" type="submit" disabled=${busy}>Create wallet</button>
      </form>
      <${ErrorBox} error=${actionError} />
    </section>`;
  }
}

// ---------------------------------------------------------------- Access keys

class AccessKeys extends View {
  load() {
    return api("GET", "/access-keys");
  }
  create(event) {
    event.preventDefault();
    const form = event.target;
    const data = new FormData(form);
    const body = { name: String(data.get("name")).trim(), scopes: data.getAll("scopes") };
    const wallets = list(String(data.get("wallets") || ""));
    const collections = list(String(data.get("collections") || ""));
    const chains = list(String(data.get("chains") || ""));
    if (wallets.length) body.wallets = wallets;
    if (collections.length) body.collections = collections;
    if (chains.length) body.chains = chains;
    if (data.get("expiresAt")) body.expiresAt = new Date(String(data.get("expiresAt"))).toISOString();
    this.act(async () => {
      const created = await api("POST", "/access-keys", body);
      // The secret lives in this component's state only: gone on reload, never stored.
      this.setState({ created: { id: created.id, name: created.name, key: created.key }, copied: false });
      form.reset();
    });
  }
  async copy() {
    try {
      await navigator.clipboard.writeText(this.state.created.key);
      this.setState({ copied: true });
    } catch {
      this.setState({ copied: "failed" });
    }
  }
  revoke(id) {
    this.act(async () => {
      await api("DELETE", `/access-keys/${encodeURIComponent(id)}`);
      this.setState({ confirming: null });
    });
  }
  render(_props, { data, error, block, actionError, busy, created, copied, confirming }) {
    return html`<section aria-labelledby="view-title">
      <h2 id="view-title" tabindex="-1">Access keys</h2>
      <${BlockLine} block=${block} />
      <${ErrorBox} error=${error} />
      ${
        created
          ? html`<div class="secret" role="status">
              <p>
                The secret of <strong>${created.name}</strong>, shown this once. Store it now: the service keeps only a
                hash.
              </p>
              <label>Secret<input class="mono" readonly value=${created.key} size="64" data-secret /></label>
              <p class="row">
                <button class="action" onClick=${() => this.copy()}>Copy secret</button>
                <button class="secondary" onClick=${() => this.setState({ created: null })}>I have stored it</button>
                <span aria-live="polite"
                  >${copied === true ? "Copied." : copied === "failed" ? "Copy failed: select it." : ""}</span
                >
              </p>
            </div>`
          : null
      }
      ${
        data
          ? html`<table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Id</th>
                  <th scope="col">Scopes</th>
                  <th scope="col">Limits</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col">Expires</th>
                  <th scope="col"><span class="skip">Actions</span></th>
                </tr>
              </thead>
              <tbody>
                ${data.accessKeys.map(
                  (k) =>
                    html`<tr key=${k.id} data-key-id=${k.id}>
                      <td>${k.name}</td>
                      <td class="mono">${k.id}</td>
                      <td>${k.scopes.join(", ")}</td>
                      <td>
                        ${k.wallets ? `wallets: ${k.wallets.join(", ")}` : ""}
                        ${k.collections ? `collections: ${k.collections.join(", ")}` : ""}
                        ${k.chains ? `chains: ${k.chains.join(", ")}` : ""}
                      </td>
                      <td>${when(k.createdAt)}</td>
                      <td>${when(k.lastUsedAt)}</td>
                      <td>${when(k.expiresAt)}</td>
                      <td>
                        ${
                          confirming === k.id
                            ? html`<button class="danger" onClick=${() => this.revoke(k.id)} disabled=${busy}>
                                  Confirm revoking ${k.name}
                                </button>
                                <button class="secondary" onClick=${() => this.setState({ confirming: null })}>
                                  Cancel
                                </button>`
                            : html`<button class="danger" onClick=${() => this.setState({ confirming: k.id })}>
                                Revoke ${k.name}
                              </button>`
                        }
                      </td>
                    </tr>`,
                )}
              </tbody>
            </table>`
          : null
      }
      <${ErrorBox} error=${actionError} />
      <h3>Create a key</h3>
      <form onSubmit=${(e) => this.create(e)} autocomplete="off">
        <div class="row">
          <label>Name<input name="name" required maxlength="100" /></label>
          <label>Wallets (addresses, optional)<input name="wallets" size="44" /></label>
          <label>Collections (addresses, optional)<input name="collections" size="44" /></label>
          <label>Chains (e.g. 8453, base; optional)<input name="chains" size="20" /></label>
          <label>Expires (optional)<input name="expiresAt" type="datetime-local" /></label>
        </div>
        <fieldset>
          <legend>Scopes</legend>
          <div class="row">
            ${SCOPES.map((s) => html`<label><input type="checkbox" name="scopes" value=${s} />${s}</label>`)}
          </div>
        </fieldset>
        <button class="action" type="submit" disabled=${busy}>Create key</button>
      </form>
    </section>`;
  }
}

class AuditEvents extends View {
  constructor(props) {
    super(props);
    this.state = { ...this.state, older: [], cursor: undefined };
  }
  load() {
    return api("GET", "/audit-events?limit=50");
  }
  async more() {
    const cursor = this.state.cursor ?? this.state.data?.cursor;
    try {
      const page = await api("GET", `/audit-events?limit=50&cursor=${encodeURIComponent(cursor)}`);
      this.setState({ older: [...this.state.older, ...page.auditEvents], cursor: page.cursor ?? null });
    } catch (error) {
      this.setState({ error });
    }
  }
  render(_props, { data, error, block, older, cursor }) {
    const rows = [...(data?.auditEvents ?? []), ...older];
    const hasMore = cursor === undefined ? Boolean(data?.cursor) : Boolean(cursor);
    return html`<section aria-labelledby="view-title">
      <h2 id="view-title" tabindex="-1">Audit events</h2>
      <${BlockLine} block=${block} />
      <${ErrorBox} error=${error} />
      <table>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Action</th>
            <th scope="col">Target</th>
            <th scope="col">By key</th>
            <th scope="col">From address</th>
            <th scope="col">Details</th>
          </tr>
        </thead>
        <tbody>
          ${rows.map(
            (e) =>
              html`<tr key=${e.id}>
                <td>${when(e.at)}</td>
                <td>${e.action}</td>
                <td class="mono">${e.targetType} ${e.targetId}</td>
                <td>${e.keyName}</td>
                <td>${e.clientAddress}</td>
                <td class="mono">${JSON.stringify(e.details)}</td>
              </tr>`,
          )}
        </tbody>
      </table>
      ${hasMore ? html`<p><button class="secondary" onClick=${() => this.more()}>Older events</button></p>` : null}
    </section>`;
  }
}

// ---------------------------------------------------------------- Webhooks

class Webhooks extends View {
  constructor(props) {
    super(props);
    this.pollMs = 2 * POLL_MS; // deliveries change on their own (retries, the receiver's answers)
  }
  async load() {
    const { webhooks } = await api("GET", "/webhooks");
    const selected = this.state.selected ?? webhooks[0]?.id ?? null;
    const deliveries = selected
      ? (await api("GET", `/webhooks/${encodeURIComponent(selected)}/deliveries?limit=50`)).deliveries
      : [];
    return { webhooks, selected, deliveries };
  }
  select(id) {
    this.setState({ selected: id, secret: null });
    this.state.selected = id;
    this.reload();
  }
  render(_props, { data, error, block, actionError, busy, secret }) {
    const selected = data?.webhooks.find((w) => w.id === data.selected);
    return html`<section aria-labelledby="view-title">
      <h2 id="view-title" tabindex="-1">Webhooks</h2>
      <${BlockLine} block=${block} />
      <${ErrorBox} error=${error} />
      ${data && data.webhooks.length === 0 ? html`<p class="notice">No webhook endpoints.</p>` : null}
      ${
        data && data.webhooks.length > 0
          ? html`<table>
              <thead>
                <tr>
                  <th scope="col">URL</th>
                  <th scope="col">Events</th>
                  <th scope="col">State</th>
                  <th scope="col"><span class="skip">Actions</span></th>
                </tr>
              </thead>
              <tbody>
                ${data.webhooks.map(
                  (w) =>
                    html`<tr key=${w.id} data-webhook-id=${w.id} aria-selected=${w.id === data.selected}>
                      <td class="mono">${w.url}</td>
                      <td>${w.events.join(", ")}</td>
                      <td>${w.enabled ? "enabled" : `disabled${w.disabledReason ? ` (${w.disabledReason})` : ""}`}</td>
                      <td>
                        <div class="row">
                          <button class="secondary" onClick=${() => this.select(w.id)}>Deliveries of ${w.url}</button>
                          <button
                            class="secondary"
                            disabled=${busy}
                            onClick=${() => this.act(() => api("PATCH", `/webhooks/${w.id}`, { enabled: !w.enabled }))}
                          >
                            ${w.enabled ? "Disable" : "Enable"}
                          </button>
                          <button
                            class="secondary"
                            disabled=${busy}
                            onClick=${() =>
                              this.act(async () => {
                                const rotated = await api("POST", `/webhooks/${w.id}/rotate-secret`);
                                this.setState({ secret: { id: w.id, value: rotated.secret } });
                              })}
                          >
                            Rotate secret
                          </button>
                        </div>
                      </td>
                    </tr>`,
                )}
              </tbody>
            </table>`
          : null
      }
      ${
        secret
          ? html`<div class="secret" role="status">
              <label
                >New signing secret, shown this once (the old one signs beside it for 24 h)
                <input class="mono" readonly value=${secret.value} size="60" />
              </label>
              <button class="secondary" onClick=${() => this.setState({ secret: null })}>I have stored it</button>
            </div>`
          : null
      }
      <${ErrorBox} error=${actionError} />
      ${
        selected
          ? html`<h3>Deliveries to ${selected.url}</h3>
              <table>
                <thead>
                  <tr>
                    <th scope="col">Event</th>
                    <th scope="col">Type</th>
                    <th scope="col">Status</th>
                    <th scope="col">Attempts</th>
                    <th scope="col">Last HTTP status</th>
                    <th scope="col">Next try</th>
                    <th scope="col"><span class="skip">Actions</span></th>
                  </tr>
                </thead>
                <tbody>
                  ${data.deliveries.map(
                    (d) =>
                      html`<tr key=${d.eventId} data-event-id=${d.eventId} data-delivery-status=${d.status}>
                        <td class="mono">${d.eventId}</td>
                        <td>${d.type}</td>
                        <td>${d.status}${d.inFlight ? " (in flight)" : ""}</td>
                        <td>
                          <details>
                            <summary>${d.attempts}</summary>
                            <ol>
                              ${d.attemptLog.map(
                                (a) => html`<li>${when(a.at)}: ${a.status ?? a.error ?? ""} (${a.ms} ms)</li>`,
                              )}
                            </ol>
                          </details>
                        </td>
                        <td>${d.lastStatus ?? d.lastError ?? ""}</td>
                        <td>${when(d.nextAttemptAt)}</td>
                        <td>
                          <button
                            class="secondary"
                            disabled=${busy}
                            onClick=${() =>
                              this.act(() => api("POST", `/webhooks/${selected.id}/deliveries/${d.eventId}/retry`))}
                          >
                            Retry ${d.type}
                          </button>
                        </td>
                      </tr>`,
                  )}
                </tbody>
              </table>`
          : null
      }
    </section>`;
  }
}

// ---------------------------------------------------------------- Collections

/** Bars of the largest holders, drawn by uPlot (the table below carries the same numbers for screen readers). */
class HoldersChart extends Component {
  componentDidMount() {
    this.draw();
  }
  componentDidUpdate() {
    this.draw();
  }
  componentWillUnmount() {
    this.plot?.destroy();
  }
  draw() {
    this.plot?.destroy();
    const owners = this.props.owners;
    if (!globalThis.uPlot || !this.el || owners.length === 0) return;
    const uPlot = globalThis.uPlot;
    const xs = owners.map((_, i) => i + 1);
    const ys = owners.map((o) => Number(o.tokens));
    this.plot = new uPlot(
      {
        width: 640,
        height: 220,
        title: "Tokens held by the largest holders",
        scales: {
          x: { time: false, range: [0.5, owners.length + 0.5] },
          // Bars start at zero, so that their lengths compare: uPlot's own range would start near the least.
          y: { range: (_u, _min, max) => [0, uPlot.rangeNum(0, max, 0.1, true)[1]] },
        },
        axes: [
          { label: "holder rank", values: (_u, ticks) => ticks.map((t) => (Number.isInteger(t) ? `#${t}` : "")) },
          { label: "tokens" },
        ],
        legend: { show: false },
        series: [
          {},
          { label: "tokens", stroke: "#0b4fa8", fill: "#0b4fa855", paths: uPlot.paths.bars({ size: [0.6, 60] }) },
        ],
        // The y range drawn, on the element: the canvas has no text for a test (or a reader of the DOM) to check.
        hooks: { draw: [(u) => (u.root.parentElement.dataset.yRange = `${u.scales.y.min} to ${u.scales.y.max}`)] },
      },
      [xs, ys],
      this.el,
    );
  }
  render() {
    return html`<div
      ref=${(el) => (this.el = el)}
      class="chart"
      role="img"
      aria-label="Bar chart of the largest holders' token counts (also in the table below)"
    ></div>`;
  }
}

class Collections extends View {
  blockOf(data) {
    return data?.collection?.blockNumber ?? null;
  }
  async load() {
    // No list of collections in the API: those the key's operations name, and any typed in.
    const [ops, chains] = await Promise.all([
      api("GET", "/nft/operations?limit=200").catch(() => ({ operations: [] })),
      configuredChains(),
    ]);
    // Several chains: a collection is (chain, address); the chain selected, else the newest operation's, else the first.
    const several = chains.length > 1;
    if (several && !chains.some((c) => c.id === this.chain))
      this.chain = ops.operations.find((o) => o.contractAddress)?.chainId ?? chains[0].id;
    const chain = several ? this.chain : undefined;
    const ofChain = ops.operations.filter((o) => !chain || o.chainId === chain);
    const known = [...new Set([...(this.state.extra ?? []), ...ofChain.map((o) => o.contractAddress).filter(Boolean)])];
    const address = this.state.selected ?? known[0];
    if (!address) return { known, collection: null, chains, chain };
    const enc = encodeURIComponent(address);
    const q = chainQuery(chain, "&");
    const collection = await api("GET", `/collections/${enc}${chainQuery(chain)}`);
    const owners = (await api("GET", `/collections/${enc}/owners?limit=10${q}`)).owners;
    if (collection.standard === "erc1155")
      return {
        ...(await this.loadEditions(enc, collection, chain)),
        known,
        address,
        collection,
        owners,
        chains,
        chain,
      };
    // Recent transfers: those of the newest tokens (ids count up from 1 on the reference collection).
    const supply = Number(collection.totalSupply);
    const ids = [];
    for (let id = supply; id >= 1 && ids.length < 10; id--) ids.push(id);
    const tokens = await Promise.all(
      ids.map((id) => api("GET", `/collections/${enc}/tokens/${id}${chainQuery(chain)}`).catch(() => null)),
    );
    const transfers = tokens
      .filter(Boolean)
      .flatMap((t) => t.transfers.map((x) => ({ ...x, tokenId: t.tokenId })))
      .sort((a, b) => b.blockNumber - a.blockNumber || b.logIndex - a.logIndex)
      .slice(0, 20);
    let allowlist;
    try {
      allowlist = { value: await api("GET", `/collections/${enc}/allowlist${chainQuery(chain)}`) };
    } catch (error) {
      if (error.status === 401) throw error;
      allowlist = error.code === "ALLOWLIST_NOT_FOUND" ? { none: true } : { error };
    }
    let metadata;
    try {
      metadata = { value: await api("GET", `/collections/${enc}/metadata?limit=1${q}`) };
    } catch (error) {
      if (error.status === 401) throw error;
      metadata = { error };
    }
    return { known, address, collection, owners, transfers, allowlist, metadata, chains, chain };
  }
  /**
   * An ERC-1155's editions (the first 20 by id), each with its largest holders and their amounts, and
   * the recent moves among them; no allowlist (ERC-721 only in this version), hosted metadata as for ERC-721.
   */
  async loadEditions(enc, collection, chain) {
    const shown = (collection.editions ?? []).slice(0, 20);
    const tokens = await Promise.all(
      shown.map((e) =>
        api("GET", `/collections/${enc}/tokens/${encodeURIComponent(e.tokenId)}?limit=10${chainQuery(chain, "&")}`),
      ),
    );
    const editions = tokens.map((t) => ({ ...t, owners: t.owners.slice(0, 10) }));
    const transfers = tokens
      .flatMap((t) => t.transfers.map((x) => ({ ...x, tokenId: t.tokenId })))
      .sort((a, b) => b.blockNumber - a.blockNumber || b.logIndex - a.logIndex)
      .slice(0, 20);
    let metadata;
    try {
      metadata = { value: await api("GET", `/collections/${enc}/metadata?limit=1${chainQuery(chain, "&")}`) };
    } catch (error) {
      if (error.status === 401) throw error;
      metadata = { error };
    }
    return { editions, transfers, allowlist: { editions: true }, metadata };
  }
  /** A token's document as wallets read it (GET /metadata/…: public, the served bytes), shown as text. */
  async preview(event) {
    event.preventDefault();
    const tokenId = String(new FormData(event.target).get("tokenId")).trim();
    const { chainId, address } = this.state.data.metadata.value;
    const path = `/metadata/${encodeURIComponent(chainId)}/${encodeURIComponent(address)}/${encodeURIComponent(tokenId)}.json`;
    try {
      // Served with max-age=60 for marketplaces: the preview asks again (ETag), or a reveal shows a minute late.
      const document = await api("GET", path, undefined, { cache: "no-cache" });
      this.setState({ preview: { tokenId, text: JSON.stringify(document, null, 2) } });
    } catch (error) {
      this.setState({ preview: { tokenId, error } });
    }
  }
  pickChain(chain) {
    this.chain = chain;
    this.state.selected = undefined;
    this.reload();
  }
  pick(event) {
    event.preventDefault();
    const address = String(new FormData(event.target).get("address")).trim();
    if (!address) return;
    this.state.selected = address;
    this.state.extra = [...new Set([...(this.state.extra ?? []), address])];
    this.reload();
  }
  render(_props, { data, error, block }) {
    const c = data?.collection;
    return html`<section aria-labelledby="view-title" data-chain=${data?.chain ?? ""}>
      <h2 id="view-title" tabindex="-1">Collections</h2>
      <${BlockLine} block=${block} />
      <form class="inline" onSubmit=${(e) => this.pick(e)}>
        <${ChainSelect} chains=${data?.chains} value=${data?.chain} onChange=${(c) => this.pickChain(c)} />
        <label
          >Collection
          <input name="address" list="known-collections" size="44" autocomplete="off" value=${data?.address ?? ""} />
        </label>
        <datalist id="known-collections">
          ${(data?.known ?? []).map((a) => html`<option value=${a}></option>`)}
        </datalist>
        <button class="action" type="submit">Show</button>
      </form>
      <${ErrorBox} error=${error} />
      ${data && !c ? html`<p class="notice">No collection yet: type an address.</p>` : null}
      ${
        c
          ? html`<dl class="row" data-collection=${c.address}>
                <div>
                  <dt>Name</dt>
                  <dd data-collection-name>${c.name ?? "(none)"}</dd>
                </div>
                <div>
                  <dt>Symbol</dt>
                  <dd>${c.symbol ?? ""}</dd>
                </div>
                <div>
                  <dt>Standard</dt>
                  <dd data-collection-standard>${c.standard === "erc1155" ? "ERC-1155 editions" : "ERC-721"}</dd>
                </div>
                <div>
                  <dt>Priced in</dt>
                  <dd data-collection-payment-token>
                    ${c.paymentToken ? `${c.paymentToken.symbol || c.paymentToken.address} (${c.paymentToken.decimals} decimals)` : "the native coin"}
                  </dd>
                </div>
                <div>
                  <dt>Supply</dt>
                  <dd>${c.totalSupply}</dd>
                </div>
                <div>
                  <dt>Holders</dt>
                  <dd>${c.holders}</dd>
                </div>
                <div>
                  <dt>Indexed to block</dt>
                  <dd>${c.indexedBlock ?? "not yet"}</dd>
                </div>
                <div>
                  <dt>Chain head</dt>
                  <dd>${c.chainHead ?? ""}</dd>
                </div>
              </dl>
              <h3>Largest holders</h3>
              <${HoldersChart} owners=${data.owners} />
              <table>
                <thead>
                  <tr>
                    <th scope="col">Rank</th>
                    <th scope="col">Holder</th>
                    <th scope="col">${data.editions ? "Amount (all editions)" : "Tokens"}</th>
                  </tr>
                </thead>
                <tbody>
                  ${data.owners.map(
                    (o, i) =>
                      html`<tr key=${o.address}>
                        <td>${i + 1}</td>
                        <td class="mono">${o.address}</td>
                        <td>${o.tokens}</td>
                      </tr>`,
                  )}
                </tbody>
              </table>
              ${data.editions ? this.editionsPanel(data.editions) : null}
              <h3>Recent transfers (of the newest ${data.editions ? "editions" : "tokens"})</h3>
              <table>
                <thead>
                  <tr>
                    <th scope="col">Block</th>
                    <th scope="col">Token</th>
                    ${data.editions ? html`<th scope="col">Amount</th>` : null}
                    <th scope="col">From</th>
                    <th scope="col">To</th>
                    <th scope="col">Transaction</th>
                  </tr>
                </thead>
                <tbody>
                  ${data.transfers.map(
                    (t) =>
                      html`<tr key=${`${t.transactionHash}-${t.logIndex}-${t.tokenId}`}>
                        <td>${t.blockNumber}</td>
                        <td>${t.tokenId}</td>
                        ${data.editions ? html`<td>${t.amount}</td>` : null}
                        <td class="mono">${short(t.from)}</td>
                        <td class="mono">${short(t.to)}</td>
                        <td class="mono">${short(t.transactionHash)}</td>
                      </tr>`,
                  )}
                </tbody>
              </table>
              <h3>Allowlist</h3>
              ${
                data.allowlist.editions
                  ? html`<p class="notice" data-allowlist="editions">
                      Allowlists are for ERC-721 collections only in this version.
                    </p>`
                  : data.allowlist.none
                    ? html`<p class="notice" data-allowlist="none">
                        No allowlist is set for this collection yet. Its owner sets one with
                        <span class="mono">PUT /collections/${data.address}/allowlist</span> (scope nft:configure),
                        entries as <span class="mono">{"entries":[{"address","allowance","price"}]}</span>.
                      </p>`
                    : data.allowlist.error
                      ? html`<${ErrorBox} error=${data.allowlist.error} />`
                      : html`<p>
                            ${
                              data.allowlist.value.root === null
                                ? "No list is in force yet."
                                : html`Root <span class="mono">${data.allowlist.value.root}</span>,
                                    ${data.allowlist.value.entries} entries.`
                            }
                          </p>
                          ${
                            data.allowlist.value.pending &&
                            html`<p data-allowlist="pending">
                              Pending (in force once its operation confirms): root
                              <span class="mono">${data.allowlist.value.pending.root}</span>,
                              ${data.allowlist.value.pending.entries} entries.
                            </p>`
                          }`
              }
              <h3>Metadata</h3>
              ${data.metadata.error ? html`<${ErrorBox} error=${data.metadata.error} />` : this.metadataPanel(data.metadata.value)}`
          : null
      }
    </section>`;
  }
}

/** An ERC-1155's editions: each one's supply and holders count, and its largest holders with their amounts. */
Collections.prototype.editionsPanel = function (editions) {
  return html`<h3>Editions</h3>
    ${editions.length === 0 ? html`<p class="notice">No edition has been minted yet.</p>` : null}
    ${editions.map(
      (e) =>
        html`<section class="edition" data-edition=${e.tokenId} aria-labelledby=${`edition-${e.tokenId}`}>
          <h4 id=${`edition-${e.tokenId}`}>Edition ${e.tokenId}</h4>
          <p>
            Supply <span data-edition-supply>${e.supply}</span>, held by <span data-edition-holders>${e.holders}</span>
          </p>
          <table>
            <caption>
              Largest holders of edition ${e.tokenId}
            </caption>
            <thead>
              <tr>
                <th scope="col">Holder</th>
                <th scope="col">Amount</th>
              </tr>
            </thead>
            <tbody>
              ${e.owners.map(
                (o) =>
                  html`<tr key=${o.address} data-holder=${o.address}>
                    <td class="mono">${o.address}</td>
                    <td data-amount>${o.amount}</td>
                  </tr>`,
              )}
            </tbody>
          </table>
        </section>`,
    )}`;
};

/** The collection's hosted metadata: its state, the provenance and reveal, the CAR's root, a token preview. */
Collections.prototype.metadataPanel = function (m) {
  const preview = this.state.preview;
  return html`<dl class="facts" data-metadata=${m.state}>
      <dt>Documents</dt>
      <dd>${m.count}</dd>
      <dt>State</dt>
      <dd>${m.state === "revealed" ? "revealed" : m.state === "committed" ? "hidden (committed)" : "hidden"}</dd>
      <dt>Provenance</dt>
      <dd class="mono">${m.provenance ?? "not set"}</dd>
      <dt>Starting index</dt>
      <dd>${m.startingIndex ?? "not revealed"}</dd>
      <dt>Root CID</dt>
      <dd class="mono">${m.rootCid ?? "not built (GET …/metadata.car after the reveal)"}</dd>
    </dl>
    <form class="inline" onSubmit=${(e) => this.preview(e)}>
      <label>Token <input name="tokenId" type="number" min="1" required value=${preview?.tokenId ?? "1"} /></label>
      <button type="submit">Preview</button>
    </form>
    ${preview?.error ? html`<${ErrorBox} error=${preview.error} />` : null}
    ${preview?.text ? html`<pre class="preview" aria-label=${`Token ${preview.tokenId}'s document`}>${preview.text}</pre>` : null}`;
};

// ---------------------------------------------------------------- Jobs

class Jobs extends View {
  async load() {
    try {
      return { jobs: (await api("GET", "/jobs")).jobs };
    } catch (error) {
      if (error.status === 404 && error.code === "NOT_FOUND") return { unavailable: true };
      throw error;
    }
  }
  async download(job) {
    try {
      const res = await fetch(`/jobs/${encodeURIComponent(job.jobId)}/rows?status=failed`, {
        headers: { accept: "text/csv", authorization: `Bearer ${session.key}` },
      });
      if (!res.ok)
        throw new ApiError(res.status, String(res.status), `The failed rows could not be read (${res.status})`);
      const url = URL.createObjectURL(await res.blob());
      const a = document.createElement("a");
      a.href = url;
      a.download = `job-${job.jobId}-failed.csv`;
      a.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (error) {
      this.setState({ actionError: error });
    }
  }
  render(_props, { data, error, block, actionError }) {
    return html`<section aria-labelledby="view-title">
      <h2 id="view-title" tabindex="-1">Jobs</h2>
      <${BlockLine} block=${block} />
      <${ErrorBox} error=${error} />
      ${
        data?.unavailable
          ? html`<p class="notice" data-jobs="unavailable">
              Jobs are not available in this version of the service (GET /jobs answered 404 NOT_FOUND).
            </p>`
          : null
      }
      ${
        data?.jobs
          ? html`<table>
              <thead>
                <tr>
                  <th scope="col">Job</th>
                  <th scope="col">Status</th>
                  <th scope="col">Progress</th>
                  <th scope="col">Failed rows</th>
                </tr>
              </thead>
              <tbody>
                ${data.jobs.map((j) => {
                  // GET /jobs: rows is the job's row count; rowsByState counts them by state.
                  const rows = j.rowsByState ?? {};
                  const total = Number(j.rows ?? 0);
                  const done = Number(rows.confirmed ?? 0);
                  return html`<tr key=${j.jobId}>
                    <td class="mono">${j.jobId} (${j.kind ?? ""})</td>
                    <td>${j.status}</td>
                    <td>
                      <progress
                        max=${total || 1}
                        value=${done}
                        aria-label=${`Job ${j.jobId}: ${done} of ${total} rows confirmed`}
                      ></progress>
                      ${done} / ${total}
                    </td>
                    <td>
                      ${
                        Number(rows.failed ?? 0) > 0
                          ? html`<button class="secondary" onClick=${() => this.download(j)}>
                              Download ${rows.failed} failed rows (CSV)
                            </button>`
                          : "none"
                      }
                    </td>
                  </tr>`;
                })}
              </tbody>
            </table>`
          : null
      }
      <${ErrorBox} error=${actionError} />
    </section>`;
  }
}

// ---------------------------------------------------------------- The page

const VIEWS = [
  ["operations", "Operations", Operations],
  ["approvals", "Approvals", Approvals],
  ["wallets", "Wallets", Wallets],
  ["access-keys", "Access keys", AccessKeys],
  ["audit-events", "Audit events", AuditEvents],
  ["webhooks", "Webhooks", Webhooks],
  ["collections", "Collections", Collections],
  ["jobs", "Jobs", Jobs],
];

/**
 * Views shown only to a key holding a scope. The API says no key its scopes: a read the scope guards
 * tells (403: not held; 404: a service without the feature). Any other answer shows the view, with its error.
 */
const GATES = {
  approvals: { scope: "approvals:decide", probe: "/approvals?status=pending&limit=1" },
};

/** Which gated views the signed-in key may see, by view id. */
async function allowedViews() {
  const allowed = {};
  await Promise.all(
    Object.entries(GATES).map(async ([id, gate]) => {
      try {
        await api("GET", gate.probe);
        allowed[id] = true;
      } catch (error) {
        allowed[id] = ![401, 403, 404].includes(error.status);
      }
    }),
  );
  return allowed;
}

class SignIn extends Component {
  async submit(event) {
    event.preventDefault();
    const input = event.target.elements.key;
    const key = input.value.trim();
    input.value = "";
    this.setState({ error: null, busy: true });
    session.signIn(key);
    try {
      // Any answer but 401 means the key is good; 403 only says it may not read operations.
      await api("GET", "/nft/operations?limit=1").catch((error) => {
        if (error.status !== 403) throw error;
      });
      this.props.onSignedIn();
    } catch (error) {
      session.signOut();
      this.setState({ error, busy: false });
    }
  }
  componentDidMount() {
    this.input?.focus();
  }
  render({ reason }, { error, busy }) {
    return html`<main id="main" class="signin">
      <h1>NFT operations console</h1>
      <p>Sign in with an access key. It is kept in this tab only, and sent to this service alone.</p>
      ${reason ? html`<p class="error" role="alert">${reason}</p>` : null}
      <form onSubmit=${(e) => this.submit(e)} autocomplete="off">
        <label
          >Access key<input
            name="key"
            type="password"
            required
            autocomplete="off"
            spellcheck="false"
            ref=${(el) => (this.input = el)}
        /></label>
        <p><button class="action" type="submit" disabled=${busy}>Sign in</button></p>
      </form>
      <${ErrorBox} error=${error} />
    </main>`;
  }
}

class App extends Component {
  constructor() {
    super();
    this.state = { signedIn: Boolean(session.key), view: "operations", reason: null, allowed: {} };
    session.onRefused = (message) => {
      session.signOut();
      this.setState({
        signedIn: false,
        reason: `Signed out: the service refused the key (${message})`,
        view: "operations",
        allowed: {},
      });
    };
  }
  componentDidMount() {
    if (this.state.signedIn) this.gates();
  }
  /** Asks which gated views this key may see; an answer for a key signed out since is dropped. */
  async gates() {
    const key = session.key;
    const allowed = await allowedViews();
    if (session.key === key) this.setState({ allowed });
  }
  show(view) {
    this.setState({ view }, () => document.getElementById("view-title")?.focus());
  }
  render(_props, { signedIn, view, reason, allowed }) {
    if (!signedIn)
      return html`<${SignIn}
        reason=${reason}
        onSignedIn=${() => {
          this.setState({ signedIn: true, reason: null });
          this.gates();
        }}
      />`;
    const views = VIEWS.filter(([id]) => !GATES[id] || allowed[id]);
    const [current, title, ViewComponent] = views.find(([id]) => id === view) ?? views[0];
    return html`<a class="skip" href="#main">Skip to the view</a>
      <header>
        <h1>NFT operations console</h1>
        <span class="who">${title}</span>
        <button
          class="secondary"
          onClick=${() => {
            session.signOut();
            this.setState({ signedIn: false, reason: null, view: "operations", allowed: {} });
          }}
        >
          Sign out
        </button>
      </header>
      <div class="layout">
        <nav aria-label="Views">
          <ul>
            ${views.map(
              ([id, label]) =>
                html`<li key=${id}>
                  <button
                    aria-current=${id === current ? "page" : undefined}
                    onClick=${() => this.show(id)}
                    data-view=${id}
                  >
                    ${label}
                  </button>
                </li>`,
            )}
          </ul>
        </nav>
        <main id="main" tabindex="-1"><${ViewComponent} key=${current} /></main>
      </div>`;
  }
}

render(html`<${App} />`, document.getElementById("app"));
