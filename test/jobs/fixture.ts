/**
 * What the job tests share: a service holding a wallet (the jobs' signer), CSV lists of fresh
 * recipients, polling a job to a status, and reading its Server-Sent Events.
 */
import { randomBytes } from "node:crypto";
import { expect } from "chai";
import { getAddress, hexlify, type JsonRpcProvider, type Wallet } from "ethers";
import { collectionAt, sleep, type ApiResponse, type JsonBody } from "../api/harness";
import { ROOT_AUTH, type KeyedClient } from "../wallets/fixture";

/** A fresh address (no key needed: nobody signs for a recipient). */
export const randomAddress = () => getAddress(hexlify(randomBytes(20)));

/** `count` rows: fresh addresses with amounts 1 to 3, the last `duplicates` rows repeating earlier addresses. */
export function recipientRows(count: number, duplicates = 0): [string, number][] {
  const rows: [string, number][] = [];
  for (let i = 0; i < count - duplicates; i++) rows.push([randomAddress(), (i % 3) + 1]);
  for (let i = 0; i < duplicates; i++) rows.push([rows[i * 7][0], 1]);
  return rows;
}

/** The amount each address should end with (duplicates added). */
export function expectedBalances(rows: [string, number][]): Map<string, bigint> {
  const totals = new Map<string, bigint>();
  for (const [address, amount] of rows) totals.set(address, (totals.get(address) ?? 0n) + BigInt(amount));
  return totals;
}

export const csvOf = (rows: [string, number][]) =>
  `address,amount\n${rows.map(([address, amount]) => `${address},${amount}`).join("\n")}\n`;

/** POST /jobs with a CSV body and the job's fields in the query. */
export function postCsv(client: KeyedClient, query: Record<string, string>, csv: string): Promise<ApiResponse> {
  return client.api.request("POST", `/jobs?${new URLSearchParams(query)}`, {
    raw: csv,
    headers: { ...ROOT_AUTH, "content-type": "text/csv" },
  });
}

/** Polls GET /jobs/{id} until its status is one of `statuses`; the job. */
export async function waitForJob(client: KeyedClient, id: string, statuses: string[], timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await client.get(`/jobs/${id}`);
    expect(res.status, res.text).to.equal(200);
    if (statuses.includes(res.body.status as string)) return res.body;
    if (Date.now() > deadline)
      throw new Error(`job ${id} is ${res.body.status} after ${timeoutMs} ms: ${JSON.stringify(res.body.rowsByState)}`);
    await sleep(250);
  }
}

export interface SseEvent {
  event: string;
  data: JsonBody;
  at: number;
}

/** Reads GET /jobs/{id}/events until its `final` event (or the stream's end). */
export async function readEvents(baseUrl: string, id: string): Promise<SseEvent[]> {
  const res = await fetch(`${baseUrl}/jobs/${id}/events`, { headers: ROOT_AUTH });
  expect(res.status).to.equal(200);
  expect(res.headers.get("content-type")).to.match(/^text\/event-stream/);
  const events: SseEvent[] = [];
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffer.indexOf("\n\n")) !== -1) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = /^event: (.*)$/m.exec(block)?.[1] ?? "message";
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (data) events.push({ event, data: JSON.parse(data) as JsonBody, at: Date.now() });
    }
  }
  return events;
}

/** Each address's balance on chain, read `parallel` at a time. */
export async function balancesOf(
  provider: JsonRpcProvider,
  collection: string,
  addresses: string[],
  perBatch = 100,
): Promise<Map<string, bigint>> {
  // JSON-RPC batches over one request each, not a connection per call: 5,000 separate calls kept a
  // loaded node so busy (load 15) that the test timed out and the service's own calls went unanswered.
  const abi = collectionAt(collection, provider).interface;
  const url = provider._getConnection().url;
  const balances = new Map<string, bigint>();
  for (let i = 0; i < addresses.length; i += perBatch) {
    const slice = addresses.slice(i, i + perBatch);
    const body = JSON.stringify(
      slice.map((a, id) => ({
        jsonrpc: "2.0",
        id,
        method: "eth_call",
        params: [{ to: collection, data: abi.encodeFunctionData("balanceOf", [a]) }, "latest"],
      })),
    );
    // A read: asked again when a loaded node drops the connection ("other side closed", seen at load 15).
    let res: Response | undefined;
    for (let attempt = 1; !res; attempt++) {
      res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body }).catch(
        (err: unknown) => {
          if (attempt >= 3) throw err;
          return undefined;
        },
      );
      if (!res) await sleep(500);
    }
    const answers = (await res.json()) as { id: number; result?: string; error?: unknown }[];
    for (const answer of answers) {
      if (answer.result === undefined) throw new Error(`balanceOf failed: ${JSON.stringify(answer.error)}`);
      balances.set(slice[answer.id], abi.decodeFunctionResult("balanceOf", answer.result)[0] as bigint);
    }
  }
  return balances;
}

/** Makes `to` the collection's owner, straight on the chain, with its current owner's key. */
export async function transferOwnership(owner: Wallet, collection: string, to: string): Promise<void> {
  const tx = (await (collectionAt(collection, owner).transferOwnership(to) as Promise<{
    wait(): Promise<unknown>;
  }>)) as {
    wait(): Promise<unknown>;
  };
  await tx.wait();
}

/** Parses the rows CSV of GET /jobs/{id}/rows (no quoted fields but the last). */
export function parseRowsCsv(text: string): Record<string, string>[] {
  const [header, ...lines] = text.trim().split("\n");
  const names = header.split(",");
  return lines.map((line) => {
    const fields = line.split(",");
    return Object.fromEntries(names.map((name, i) => [name, fields[i] ?? ""]));
  });
}
