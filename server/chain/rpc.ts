import { makeError, type JsonRpcApiProvider, type JsonRpcError, type JsonRpcPayload, type JsonRpcResult } from "ethers";

/** One JSON-RPC answer: a result, or the node's error object (not thrown: the caller decides). */
export type RpcAnswer = { result: unknown } | { error: { code: number; message: string; data?: unknown } };

/** Calls in one HTTP request at most; a node may refuse larger batches. */
const MAX_BATCH = 100;

/**
 * JSON-RPC straight through the provider's transport: no drain timer, no ethers caching, and
 * batches when several calls go out together. Transport failures throw (ethers errors); answers
 * that carry a JSON-RPC error do not.
 */
export class Rpc {
  private nextId = 1;
  private queued: QueuedCall[] = [];

  constructor(readonly provider: JsonRpcApiProvider) {}

  /** One call; a JSON-RPC error is thrown as ethers would throw it. */
  async call<T>(method: string, params: unknown[]): Promise<T> {
    const payload = this.payload(method, params);
    const [response] = await this.provider._send(payload);
    if ("error" in response) throw this.provider.getRpcError(payload, response as JsonRpcError);
    return (response as JsonRpcResult).result as T;
  }

  /** One call whose JSON-RPC error comes back as an answer. */
  async answer(method: string, params: unknown[]): Promise<RpcAnswer> {
    const [response] = await this.provider._send(this.payload(method, params));
    return toAnswer(response);
  }

  /** Several calls in as few round trips as the batch bound allows; answers in the order asked. */
  async batch(calls: Array<[method: string, params: unknown[]]>): Promise<RpcAnswer[]> {
    if (calls.length === 0) return [];
    if (calls.length === 1) return [await this.answer(...calls[0])];
    const chunks: Array<Array<[string, unknown[]]>> = [];
    for (let i = 0; i < calls.length; i += MAX_BATCH) chunks.push(calls.slice(i, i + MAX_BATCH));
    const answered = await Promise.all(
      chunks.map(async (chunk) => {
        const payloads = chunk.map(([method, params]) => this.payload(method, params));
        const responses = await this.provider._send(payloads);
        const byId = new Map(responses.map((response) => [response.id, response]));
        return payloads.map((payload) => {
          const response = byId.get(payload.id);
          return response
            ? toAnswer(response)
            : { error: { code: -32603, message: "no answer in the batch for this call" } };
        });
      }),
    );
    return answered.flat();
  }

  /**
   * One call whose JSON-RPC error comes back as an answer, sent with every other call queued in the
   * same turn of the event loop as one JSON-RPC batch, ordered by `order` (lowest first: a sender's
   * transactions by nonce, for a node that refuses gaps). 200 concurrent writes broadcast in two
   * HTTP requests instead of 200. A transport failure throws for every call of the batch; a call
   * the batch's answer leaves out throws too (BAD_DATA), as a lost answer: it may have been run.
   */
  queue(method: string, params: unknown[], order = 0): Promise<RpcAnswer> {
    return new Promise<RpcAnswer>((resolve, reject) => {
      if (this.queued.length === 0) setImmediate(() => this.flush());
      this.queued.push({ method, params, order, resolve, reject });
    });
  }

  private flush(): void {
    const calls = this.queued.sort((a, b) => a.order - b.order);
    this.queued = [];
    for (let i = 0; i < calls.length; i += MAX_BATCH) {
      const chunk = calls.slice(i, i + MAX_BATCH);
      const payloads = chunk.map(({ method, params }) => this.payload(method, params));
      this.provider._send(payloads.length === 1 ? payloads[0] : payloads).then(
        (responses) => {
          const byId = new Map(responses.map((response) => [response.id, response]));
          chunk.forEach((call, j) => {
            const response = byId.get(payloads[j].id);
            if (response) call.resolve(toAnswer(response));
            else call.reject(makeError("no answer in the batch for this call", "BAD_DATA", { value: responses }));
          });
        },
        (err: unknown) => {
          for (const call of chunk) call.reject(err);
        },
      );
    }
  }

  /** ethers' error for a JSON-RPC error answer to `method`, to map like any other call's. */
  errorOf(method: string, params: unknown[], answer: Extract<RpcAnswer, { error: unknown }>): Error {
    return this.provider.getRpcError(this.payload(method, params), {
      id: 0,
      jsonrpc: "2.0",
      error: answer.error,
    } as JsonRpcError);
  }

  private payload(method: string, params: unknown[]): JsonRpcPayload {
    return { method, params, id: this.nextId++, jsonrpc: "2.0" };
  }
}

interface QueuedCall {
  method: string;
  params: unknown[];
  order: number;
  resolve(answer: RpcAnswer): void;
  reject(err: unknown): void;
}

function toAnswer(response: JsonRpcResult | JsonRpcError): RpcAnswer {
  if ("error" in response) {
    const { code, message, data } = (response as JsonRpcError).error;
    return { error: { code, message: String(message ?? ""), data } };
  }
  return { result: (response as JsonRpcResult).result };
}
