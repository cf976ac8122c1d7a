// The Access keys view: the keys, each revocable; create one (scopes as checkboxes), its secret shown
// once, with a copy button.
// Everything from the API is rendered as text (preact escapes it): no innerHTML.
import { BlockLine, ErrorBox, View, api, html, when } from "./shared.mjs";
import { SCOPES } from "./scopes.mjs";

const list = (text) =>
  text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);

export class AccessKeys extends View {
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
