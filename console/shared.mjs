// What the console's views share: the session and its API calls, the formatting of what the API
// answers, the View every view extends, and the chains a view may act on (with their selector).
// Everything from the API is rendered as text (preact escapes it): no innerHTML anywhere.
import { Component, h } from "./vendor/preact.mjs";
import htm from "./vendor/htm.mjs";

export const html = htm.bind(h);
const KEY_ITEM = "nft-ops-console-key";
export const POLL_MS = 1000;

/** An error answer of the API: its status, code and own message. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** The session: the key, and what to do when the API refuses it (401). */
export const session = {
  key: sessionStorage.getItem(KEY_ITEM),
  onRefused: () => {},
  signIn(key) {
    this.key = key;
    sessionStorage.setItem(KEY_ITEM, key);
  },
  signOut() {
    this.key = null;
    sessionStorage.removeItem(KEY_ITEM);
  },
};

/** One API call with the session's key; a 401 ends the session. */
export async function api(method, path, body, init = {}) {
  const headers = { accept: "application/json" };
  if (session.key) headers.authorization = `Bearer ${session.key}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(path, {
    ...init,
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  if (!res.ok) {
    const error = json && json.error ? json.error : { code: String(res.status), message: res.statusText };
    if (res.status === 401) session.onRefused(error.message);
    throw new ApiError(res.status, error.code, error.message);
  }
  return json;
}

/** The chain head, for views whose answers carry no blockNumber of their own (several chains: the first that answers). */
export async function head() {
  const res = await fetch("/health", { headers: { accept: "application/json" } });
  const json = await res.json();
  if (typeof json.blockNumber === "number") return json.blockNumber;
  const chain = (json.chains ?? []).find((c) => typeof c.blockNumber === "number");
  return chain ? chain.blockNumber : null;
}

export const weiToEther = (wei) => {
  if (wei === null || wei === undefined) return "";
  const value = BigInt(wei);
  const whole = value / 10n ** 18n;
  const fraction = (value % 10n ** 18n).toString().padStart(18, "0").slice(0, 6).replace(/0+$/, "");
  return `${whole}${fraction ? `.${fraction}` : ""} ETH`;
};
export const short = (hex) => (hex && hex.length > 14 ? `${hex.slice(0, 8)}…${hex.slice(-6)}` : hex || "");
export const when = (iso) => (iso ? new Date(iso).toLocaleString() : "");

export function ErrorBox({ error }) {
  if (!error) return null;
  return html`<p class="error" role="alert">${error.message}${error.code ? ` (${error.code})` : ""}</p>`;
}

export function BlockLine({ block }) {
  return html`<p class="block" data-block=${block ?? ""}>Reflects block <strong>${block ?? "…"}</strong></p>`;
}

/** A view that loads on mount (and on `reload()`), keeping its data, error and block. */
export class View extends Component {
  constructor(props) {
    super(props);
    this.state = { data: null, error: null, block: null, busy: false };
  }
  componentDidMount() {
    this.alive = true;
    this.reload();
  }
  componentWillUnmount() {
    this.alive = false;
    clearTimeout(this.timer);
  }
  async reload() {
    // The chain head beside the view's own reads, also when they fail (a 403 reflects a block too).
    const chainHead = this.blockOf ? null : head().catch(() => null);
    // Only the latest reload is shown: one started earlier (another chain picked) may end later.
    const mine = (this.loads = (this.loads ?? 0) + 1);
    try {
      const data = await this.load();
      if (mine !== this.loads) return;
      // A view with nothing of its own to reflect yet (no collection picked) shows the chain's head.
      const block = (this.blockOf ? this.blockOf(data) : await chainHead) ?? (await head().catch(() => null));
      if (this.alive) this.setState({ data, error: null, block });
    } catch (error) {
      if (mine !== this.loads) return;
      const block = this.state.block ?? (await (chainHead ?? head().catch(() => null)));
      if (this.alive) this.setState({ error, block });
    }
    // Live views read again while they are open.
    clearTimeout(this.timer);
    if (this.alive && this.pollMs) this.timer = setTimeout(() => this.reload(), this.pollMs);
  }
  /** Runs an action, shows its error if any, then reloads. */
  async act(fn) {
    this.setState({ busy: true, actionError: null });
    try {
      await fn();
      await this.reload();
    } catch (error) {
      this.setState({ actionError: error });
    } finally {
      this.setState({ busy: false });
    }
  }
}

let chainList;
/** The chains the service serves (GET /chains), asked once per page. */
export function configuredChains() {
  chainList ??= api("GET", "/chains")
    .then(({ chains }) => chains)
    .catch(() => {
      chainList = undefined;
      return [];
    });
  return chainList;
}

/** `?chain=` for a view's chain; none with one chain configured. */
export const chainQuery = (chain, first = "?") => (chain ? `${first}chain=${encodeURIComponent(chain)}` : "");

/** The chain selector of a view acting on one chain: shown only when several are configured. */
export function ChainSelect({ chains, value, onChange }) {
  if (!chains || chains.length < 2) return null;
  return html`<label
    >Chain
    <select name="chain" value=${value} onChange=${(e) => onChange(e.target.value)}>
      ${chains.map((c) => html`<option value=${c.id} selected=${c.id === value}>${c.name} (${c.id})</option>`)}
    </select></label
  >`;
}
