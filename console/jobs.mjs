// The Jobs view: a progress bar per job (rows confirmed of rows), and its failed rows as a CSV download.
// Everything from the API is rendered as text (preact escapes it): no innerHTML.
import { ApiError, BlockLine, ErrorBox, View, api, html, session } from "./shared.mjs";

export class Jobs extends View {
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
