// The operators' console: preact + htm from node_modules, no build step. It calls only the public
// API, with the key it was given, kept in this tab's sessionStorage (never a URL, localStorage or a
// log). Everything from the API is rendered as text (preact escapes it): no innerHTML anywhere.
// This file is the shell (sign-in, navigation); each view is a module of its own beside it.
import { Component, render } from "./vendor/preact.mjs";
import { ErrorBox, api, html, session } from "./shared.mjs";
import { Operations } from "./operations.mjs";
import { Approvals } from "./approvals.mjs";
import { Wallets } from "./wallets.mjs";
import { AccessKeys } from "./access-keys.mjs";
import { AuditEvents } from "./audit-events.mjs";
import { Webhooks } from "./webhooks.mjs";
import { Collections } from "./collections.mjs";
import { Jobs } from "./jobs.mjs";

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
