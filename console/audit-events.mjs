// The Audit events view: what keys did, newest first, paged.
// Everything from the API is rendered as text (preact escapes it): no innerHTML.
import { BlockLine, ErrorBox, View, api, html, when } from "./shared.mjs";

export class AuditEvents extends View {
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
