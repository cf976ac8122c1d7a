/**
 * CPU per webhook POST: the service's delivery sender (DeliverySender: signs each delivery and
 * POSTs it through undici's dispatch(), on the caller's event loop) against a baseline in the
 * same process, a plain undici client posting the same signed deliveries with request(), an
 * AbortController and a timer each (as the sender did before). Both post to one receiver in a process of its own, in
 * the worker's pattern: BATCH posts at once, every PAUSE_MS. The figure is this process's CPU per
 * POST (all its threads), after a warm-up, in alternating runs; lower is better.
 * Run: npm run bench:webhooks:post   (BENCH_POSTS per run, BENCH_ROUNDS pairs)
 */
import { Agent } from "undici";
import { newEndpointSecret, signatureHeader, UrlGuard } from "../server/webhooks";
import { DeliverySender } from "../server/webhooks/sender";
import { startChildReceiver } from "./child-receiver";
import { median } from "./median";
import { envSized, sized } from "./smoke";

const POSTS = envSized("BENCH_POSTS", 3000, 50);
const ROUNDS = envSized("BENCH_ROUNDS", 3, 1);
const BATCH = 13;
const PAUSE_MS = 30;
const WARMUP_POSTS = sized(3000, 50);

type Post = (eventId: string) => Promise<void>;

/** CPU ms per POST over `count` posts sent BATCH at a time. */
async function cpuPerPost(post: Post, count: number): Promise<number> {
  const before = process.cpuUsage();
  let sent = 0;
  while (sent < count) {
    const batch: Promise<void>[] = [];
    for (let k = 0; k < BATCH && sent < count; k++, sent++) batch.push(post(`evt_${sent}`));
    await Promise.all(batch);
    await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000 / count;
}

async function main(): Promise<void> {
  const receiver = await startChildReceiver();
  const secret = newEndpointSecret();
  // An operation.confirmed event's size (a signed transaction in its data).
  const body = JSON.stringify({
    type: "operation.confirmed",
    timestamp: new Date().toISOString(),
    data: { id: `op_${"0".repeat(26)}`, status: "confirmed", transactions: [`0x${"ab".repeat(220)}`] },
  });
  const sender = new DeliverySender(new UrlGuard(true));
  const service: Post = async (eventId) => {
    const result = await sender.post("wh_bench", receiver.url, eventId, [secret], body);
    if (result.kind !== "answered" || result.status !== 200) throw new Error(`delivery: ${JSON.stringify(result)}`);
  };
  const agent = new Agent({ connections: 32, headersTimeout: 10_000, bodyTimeout: 10_000 });
  const target = new URL(receiver.url);
  const baseline: Post = async (eventId) => {
    const timestamp = Math.floor(Date.now() / 1000);
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), 10_000);
    try {
      const response = await agent.request({
        origin: target.origin,
        path: target.pathname,
        method: "POST",
        headers: {
          "content-type": "application/json",
          "user-agent": "nft-ops-webhooks/0.1",
          "webhook-id": eventId,
          "webhook-timestamp": String(timestamp),
          "webhook-signature": signatureHeader([secret], eventId, timestamp, body),
        },
        body,
        signal: controller.signal,
      });
      await response.body.dump();
      if (response.statusCode !== 200) throw new Error(`baseline: ${response.statusCode}`);
    } finally {
      clearTimeout(timer);
    }
  };
  try {
    await cpuPerPost(baseline, WARMUP_POSTS);
    await cpuPerPost(service, WARMUP_POSTS);
    const base: number[] = [];
    const ours: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      if (round % 2 === 0) {
        base.push(await cpuPerPost(baseline, POSTS));
        ours.push(await cpuPerPost(service, POSTS));
      } else {
        ours.push(await cpuPerPost(service, POSTS));
        base.push(await cpuPerPost(baseline, POSTS));
      }
    }
    const show = (values: number[]) => values.map((v) => v.toFixed(3)).join(", ");
    console.log(
      `CPU per POST (ms, this process, ${BATCH} every ${PAUSE_MS} ms, ${POSTS} posts x ${ROUNDS} runs): ` +
        `the service's sender ${median(ours).toFixed(3)} [${show(ours)}], ` +
        `undici request() ${median(base).toFixed(3)} [${show(base)}]: ratio ${(median(ours) / median(base)).toFixed(2)}x`,
    );
  } finally {
    sender.close();
    await agent.close();
    receiver.close();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
