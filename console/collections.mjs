// The Collections view: a collection's supply, a chart of its largest holders (uPlot), the transfers of
// its newest tokens or editions, its allowlist and its hosted metadata (a token's document previewed).
// Everything from the API is rendered as text (preact escapes it): no innerHTML.
import { Component } from "./vendor/preact.mjs";
import { BlockLine, ChainSelect, ErrorBox, View, api, chainQuery, configuredChains, html, short } from "./shared.mjs";

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

export class Collections extends View {
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
