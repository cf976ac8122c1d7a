// The Approvals view (docs/approvals.md): the writes and jobs a key's approval rule holds, pending
// first, each plan in words; approve, or reject with a reason. Shown to a key with approvals:decide.
// Everything from the API is rendered as text (preact escapes it): no innerHTML.
import { BlockLine, ErrorBox, POLL_MS, View, api, html, when } from "./shared.mjs";

/** The pending approvals read at once (newest first); more are counted as "more" and named so. */
const PENDING_LIMIT = 100;

/** An amount in a unit of `decimals` decimals, exactly (no rounding: a person decides on it). */
function inUnits(amount, decimals) {
  if (!/^\d+$/.test(String(amount)) || !Number.isInteger(decimals)) return String(amount);
  const value = BigInt(amount);
  const base = 10n ** BigInt(decimals);
  const fraction = (value % base).toString().padStart(decimals, "0").replace(/0+$/, "");
  return `${value / base}${fraction ? `.${fraction}` : ""}`;
}

const ether = (wei) => `${inUnits(wei, 18)} ETH`;
const plural = (n, one, many = `${one}s`) => `${n} ${String(n) === "1" ? one : many}`;

/** An ERC-721 mint's amount, from its call (mint(uint256)): the plan's context does not carry it. */
function mintAmountOf(plan) {
  const data = plan.call?.data ?? "";
  return /^0x[0-9a-f]{72}$/i.test(data) ? BigInt(`0x${data.slice(10)}`).toString() : null;
}

/** What the approval would do, in a few words (its heading). */
export function summaryOf(plan) {
  const c = plan.context ?? {};
  const edition = c.tokenId !== undefined ? ` of edition ${c.tokenId}` : "";
  if (plan.job) {
    const job = plan.job;
    if (job.kind === "airdrop")
      return `Airdrop ${plural(job.totalAmount ?? "?", "token")} to ${plural(job.rows, "address", "addresses")}, in ${plural(job.batches, "batch", "batches")}`;
    return `Add ${plural(job.rows, "address", "addresses")} to the whitelist, in ${plural(job.batches, "batch", "batches")}`;
  }
  switch (plan.operation) {
    case "setPaused":
      return `${c.paused ? "Pause" : "Resume"} minting${edition}`;
    case "setCost":
      return `Set the mint price${edition}`;
    case "mint": {
      const amount = c.amount ?? mintAmountOf(plan);
      return amount ? `Mint ${plural(amount, "token")}${edition}` : `Mint${edition}`;
    }
    case "withdraw":
      return "Withdraw the collection's balance";
    case "deploy":
      return `Deploy a new collection${c.standard ? ` (${c.standard})` : ""}`;
    case "setRoyalty":
      return "Set the royalty";
    case "setPaymentToken":
      return "Change what the collection is priced in";
    default:
      return `Run ${plan.operation}`;
  }
}

/** How long until `iso`, in words ("in 23 h 59 min", "passed"). */
function untilWords(iso) {
  const ms = new Date(iso).getTime() - Date.now();
  if (ms <= 0) return "passed";
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 1) return "in less than a minute";
  const hours = Math.floor(minutes / 60);
  return `in ${hours ? `${hours} h ` : ""}${minutes % 60} min`;
}

/** The plan's facts as [term, description] pairs, each in words. */
function factsOf(approval) {
  const { plan } = approval;
  const c = plan.context ?? {};
  const facts = [
    ["Asked by", `${approval.requestedBy.name} (key ${approval.requestedBy.keyId})`],
    ["Operation", plan.operation],
    ["Chain", `${plan.chain.name} (${plan.chain.id})`],
    ["Collection", plan.collection ?? "a new one (a deployment)"],
    ["Signed by wallet", plan.call?.from ?? plan.from ?? ""],
    ["Pays with the call", String(plan.value) === "0" ? "nothing (0 ETH)" : `${ether(plan.value)} (${plan.value} wei)`],
  ];
  // A price in an ERC-20: {address, symbol, decimals} (setPaymentToken's context names only an address).
  const token = c.paymentToken && typeof c.paymentToken === "object" ? c.paymentToken : null;
  const tokenName = token ? token.symbol || token.address : "";
  const handled = new Set(token ? ["value", "paymentToken"] : ["value"]);
  if (token && c.value !== undefined)
    facts.push(["Price", `${inUnits(c.value, token.decimals)} ${tokenName}, taken from the wallet by the contract`]);
  if (plan.operation === "setCost" && c.cost !== undefined) {
    handled.add("cost");
    facts.push([
      "New price",
      `${c.cost} in the smallest unit of what the collection is priced in (${ether(c.cost)} if the native coin)`,
    ]);
  }
  if (plan.operation === "mint") {
    const amount = c.amount ?? mintAmountOf(plan);
    handled.add("amount");
    if (amount) facts.push(["Tokens", amount]);
  }
  if (c.balance !== undefined) {
    handled.add("balance");
    facts.push(["Balance to withdraw", ether(c.balance)]);
  }
  if (c.tokenBalance !== undefined && token) {
    handled.add("tokenBalance");
    facts.push(["Token balance to withdraw", `${inUnits(c.tokenBalance, token.decimals)} ${tokenName}`]);
  }
  if (plan.job) {
    const job = plan.job;
    facts.push(["Job", `${job.jobId} (${job.kind})`]);
    facts.push(["Rows", `${plural(job.rows, "address", "addresses")}, in ${plural(job.batches, "batch", "batches")}`]);
    if (job.totalAmount !== undefined) facts.push(["Tokens in all", job.totalAmount]);
    if (job.largestAmount !== undefined) facts.push(["Largest row", plural(job.largestAmount, "token")]);
    facts.push(["Estimated gas", `${job.estimatedGas} gas`]);
    // An estimate (gas × the fee now): three significant digits say it; all eighteen would claim more.
    const cost = (Number(job.estimatedCostWei) / 1e18).toLocaleString("en", { maximumSignificantDigits: 3 });
    facts.push(["Estimated cost", `about ${cost} ETH`]);
  } else {
    facts.push([
      "Gas",
      `${plan.gas} gas at most (the simulation's, with a send's margin); its fee is the gas price's when sent`,
    ]);
  }
  // What else the plan knows (a receiver, an edition, a paused state…), as the API names it.
  for (const [key, value] of Object.entries(c))
    if (!handled.has(key)) facts.push([key, typeof value === "string" ? value : JSON.stringify(value)]);
  if (approval.operationId) facts.push(["Operation id", approval.operationId]);
  facts.push(["Asked at", when(approval.createdAt)]);
  return facts;
}

/** A decision's answer, in words, for the status line. */
function outcomeOf(approval, answer) {
  const what = `${summaryOf(approval.plan)} (${approval.id})`;
  if (answer.jobId && answer.status === "running")
    return `Approved: ${what}. Job ${answer.jobId} is running (${plural(answer.rows, "row")} in ${plural(answer.batches, "batch", "batches")}); follow it in Jobs.`;
  if (answer.status === "confirmed")
    return `Approved: ${what}. Confirmed in block ${answer.blockNumber}, transaction ${answer.transactionHash}.`;
  if (answer.status === "pending")
    return `Approved: ${what}. Sent, transaction ${answer.transactionHash}; not confirmed yet: follow it in Operations.`;
  return `Approved: ${what}. The service answered ${answer.status ?? "without a status"}.`;
}

export class Approvals extends View {
  constructor(props) {
    super(props);
    this.pollMs = POLL_MS; // an approval asked for shows within 2 s
    this.state = { ...this.state, rejecting: null, deciding: null, outcome: null };
  }
  async load() {
    const [pending, recent] = await Promise.all([
      api("GET", `/approvals?status=pending&limit=${PENDING_LIMIT}`),
      api("GET", "/approvals?limit=50"),
    ]);
    return {
      pending: pending.approvals,
      morePending: Boolean(pending.cursor),
      decided: recent.approvals.filter((a) => a.status !== "pending"),
    };
  }
  componentDidUpdate() {
    // Focus follows the person's step: the reason field once asked for, the outcome (or the error) once decided.
    if (!this.focusNext) return;
    document.querySelector(this.focusNext)?.focus();
    this.focusNext = null;
  }
  /** Runs one decision: its outcome (or the API's error) shown, the list read again. */
  async decide(approval, call, done) {
    this.setState({ deciding: approval.id, actionError: null, outcome: null });
    try {
      const answer = await call();
      this.focusNext = "[data-outcome]";
      this.setState({ outcome: done(answer), rejecting: null });
    } catch (error) {
      this.focusNext = "[data-action-error]";
      this.setState({ actionError: error });
    } finally {
      this.setState({ deciding: null });
      await this.reload();
    }
  }
  approve(approval) {
    this.decide(
      approval,
      () => api("POST", `/approvals/${encodeURIComponent(approval.id)}/approve`),
      (answer) => outcomeOf(approval, answer),
    );
  }
  askReason(approval) {
    this.focusNext = `[data-approval-id="${approval.id}"] textarea[name=reason]`;
    this.setState({ rejecting: approval.id, actionError: null });
  }
  cancelReject(approval) {
    this.focusNext = `[data-approval-id="${approval.id}"] [data-reject]`;
    this.setState({ rejecting: null });
  }
  reject(event, approval) {
    event.preventDefault();
    const reason = String(new FormData(event.target).get("reason") ?? "").trim();
    if (!reason) {
      this.focusNext = `[data-approval-id="${approval.id}"] textarea[name=reason]`;
      this.setState({ actionError: { message: "A reason is required to reject" } });
      return;
    }
    this.decide(
      approval,
      () => api("POST", `/approvals/${encodeURIComponent(approval.id)}/reject`, { reason }),
      (rejected) => `Rejected: ${summaryOf(approval.plan)} (${approval.id}), with the reason “${rejected.reason}”.`,
    );
  }
  pendingItem(a) {
    const { rejecting, deciding } = this.state;
    const summary = summaryOf(a.plan);
    const titleId = `approval-${a.id}`;
    const which = html`<span class="skip"> ${summary} (${a.id})</span>`;
    return html`<li key=${a.id}>
      <article class="approval" data-approval-id=${a.id} data-approval-status=${a.status} aria-labelledby=${titleId}>
        <h4 id=${titleId}>${summary}</h4>
        <p data-expires-at=${a.expiresAt}>
          ${`${a.requestedBy.name} asks for it on ${a.plan.chain.name}. It expires ${when(a.expiresAt)} (${untilWords(a.expiresAt)}); undecided by then, ${a.jobId ? "the job is cancelled" : "the write fails"}.`}
        </p>
        <dl class="facts">
          ${factsOf(a).map(
            ([term, text]) =>
              html`<dt>${term}</dt>
                <dd>${text}</dd>`,
          )}
        </dl>
        ${
          rejecting === a.id
            ? html`<form class="inline" onSubmit=${(e) => this.reject(e, a)}>
                <label
                  >Reason for rejecting (required; recorded, and the write or job fails with it)
                  <textarea name="reason" required maxlength="1000" rows="2" cols="60"></textarea>
                </label>
                <button class="danger" type="submit" disabled=${deciding !== null}>
                  Reject with this reason${which}
                </button>
                <button class="secondary" type="button" onClick=${() => this.cancelReject(a)}>Cancel${which}</button>
              </form>`
            : html`<p class="row">
                <button class="action" onClick=${() => this.approve(a)} disabled=${deciding !== null}>
                  Approve${which}
                </button>
                <button class="danger" data-reject onClick=${() => this.askReason(a)} disabled=${deciding !== null}>
                  Reject…${which}
                </button>
              </p>`
        }
      </article>
    </li>`;
  }
  render(_props, { data, error, block, actionError, outcome, deciding }) {
    const pending = data?.pending ?? [];
    const decided = data?.decided ?? [];
    return html`<section aria-labelledby="view-title">
      <h2 id="view-title" tabindex="-1">Approvals</h2>
      <${BlockLine} block=${block} />
      <p>
        Writes and jobs held by their key's approval rule: nothing is signed or sent until approved. Approving sends it
        as if it had just arrived; rejecting fails it with your reason.
      </p>
      <${ErrorBox} error=${error} />
      <div data-action-error tabindex="-1"><${ErrorBox} error=${actionError} /></div>
      ${outcome ? html`<p class="notice" role="status" tabindex="-1" data-outcome>${outcome}</p>` : null}
      <p class="block" aria-live="polite">
        ${
          data
            ? `${pending.length}${data.morePending ? "+" : ""} pending, live (refreshed every second)${deciding ? "; deciding…" : ""}`
            : "Loading…"
        }
      </p>
      <h3>Pending</h3>
      ${data && pending.length === 0 ? html`<p class="notice" data-approvals="none">Nothing waits for a decision.</p>` : null}
      ${
        data?.morePending
          ? html`<p class="notice">The newest ${PENDING_LIMIT} are shown; decide these and the older ones follow.</p>`
          : null
      }
      <ul class="approvals">
        ${pending.map((a) => this.pendingItem(a))}
      </ul>
      <h3>Decided</h3>
      ${data && decided.length === 0 ? html`<p class="notice">None decided yet.</p>` : null}
      ${
        decided.length > 0
          ? html`<table>
              <caption class="skip">
                Decided approvals, newest asked first
              </caption>
              <thead>
                <tr>
                  <th scope="col">Asked</th>
                  <th scope="col">What</th>
                  <th scope="col">Asked by</th>
                  <th scope="col">Decision</th>
                  <th scope="col">Decided by</th>
                  <th scope="col">Decided</th>
                  <th scope="col">Reason</th>
                </tr>
              </thead>
              <tbody>
                ${decided.map(
                  (a) =>
                    html`<tr key=${a.id} data-approval-id=${a.id} data-approval-status=${a.status}>
                      <td>${when(a.createdAt)}</td>
                      <td>${summaryOf(a.plan)} <span class="mono">(${a.id})</span></td>
                      <td>${a.requestedBy.name}</td>
                      <td class=${a.status === "approved" ? "status-confirmed" : "status-failed"}>${a.status}</td>
                      <td>${a.decidedBy ? `${a.decidedBy.name} (key ${a.decidedBy.keyId})` : ""}</td>
                      <td>${when(a.decidedAt ?? (a.status === "expired" ? a.expiresAt : undefined))}</td>
                      <td>${a.reason ?? ""}</td>
                    </tr>`,
                )}
              </tbody>
            </table>`
          : null
      }
    </section>`;
  }
}
