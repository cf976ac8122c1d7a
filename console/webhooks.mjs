// The Webhooks view: the endpoints and the deliveries of one, with their attempts; retry a delivery,
// disable or enable an endpoint, rotate its secret.
// Everything from the API is rendered as text (preact escapes it): no innerHTML.
import { BlockLine, ErrorBox, POLL_MS, View, api, html, when } from "./shared.mjs";

export class Webhooks extends View {
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
