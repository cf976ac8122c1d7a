// The Wallets view: balance, next nonce, unfinished operations, spend today against the limit, the
// low-balance flag (per chain); create a wallet or import a key or a JSON keystore.
// Everything from the API is rendered as text (preact escapes it): no innerHTML.
import {
  ApiError,
  BlockLine,
  ChainSelect,
  ErrorBox,
  View,
  api,
  chainQuery,
  configuredChains,
  html,
  weiToEther,
} from "./shared.mjs";

export class Wallets extends View {
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
