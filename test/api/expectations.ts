/** Assertions shared by the API tests: the error envelope, confirmed writes, and "no gas spent". */
import { expect } from "chai";
import { getAddress, type JsonRpcProvider, type TransactionReceipt } from "ethers";
import { leakedSecrets, type ApiResponse, type JsonBody } from "./harness";

export const WRITE_FIELDS = [
  "status",
  "operationId",
  "transactionHash",
  "blockNumber",
  "from",
  "contractAddress",
  "gasUsed",
  "chainId",
];

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A write answer without its operationId (a uuid, asserted here), for exact comparisons of the rest. */
export function withoutOperationId(body: JsonBody): JsonBody {
  const { operationId, chainId, ...rest } = body;
  expect(operationId).to.match(UUID);
  // Every write answer names its chain as a decimal string (API.md, "Chains").
  expect(chainId).to.match(/^[0-9]+$/);
  return rest;
}

/** The response is the error envelope with this status and code (and nothing else at the top). */
export function expectError(res: ApiResponse, status: number, code: string): JsonBody {
  expect(res.status, `status of ${res.text}`).to.equal(status);
  expect(res.headers.get("content-type")).to.equal("application/json; charset=utf-8");
  expect(Object.keys(res.body)).to.deep.equal(["error"]);
  expect(res.body.error.code, res.text).to.equal(code);
  expect(res.body.error.message).to.be.a("string").that.is.not.empty;
  return res.body.error;
}

/**
 * A 200 (or `status`) write whose body has exactly the common write fields plus `extra`, and whose
 * transaction is on chain as described: mined in `blockNumber`, sent by `from` to the collection.
 */
export async function expectConfirmedWrite(
  res: ApiResponse,
  provider: JsonRpcProvider,
  expected: { from: string; contractAddress: string; extra: string[]; status?: number },
): Promise<TransactionReceipt> {
  expect(res.status, res.text).to.equal(expected.status ?? 200);
  const body = res.body;
  expect(Object.keys(body)).to.have.members([...WRITE_FIELDS, ...expected.extra]);
  expect(body.status).to.equal("confirmed");
  expect(body.operationId).to.match(UUID);
  expect(body.transactionHash).to.match(/^0x[0-9a-f]{64}$/);
  expect(body.blockNumber).to.be.a("number");
  expect(body.gasUsed)
    .to.be.a("string")
    .and.match(/^[1-9]\d*$/);
  expect(body.from).to.equal(getAddress(expected.from));
  expect(body.contractAddress).to.equal(getAddress(expected.contractAddress));
  const receipt = await provider.getTransactionReceipt(body.transactionHash);
  expect(receipt, "receipt on chain").to.not.equal(null);
  expect(receipt!.status).to.equal(1);
  expect(receipt!.blockNumber).to.equal(body.blockNumber);
  expect(receipt!.gasUsed.toString()).to.equal(body.gasUsed);
  expect(receipt!.from).to.equal(getAddress(expected.from));
  return receipt!;
}

export interface AccountState {
  address: string;
  balance: bigint;
  nonce: number;
}

export async function accountState(provider: JsonRpcProvider, address: string): Promise<AccountState> {
  const [balance, nonce] = await Promise.all([provider.getBalance(address), provider.getTransactionCount(address)]);
  return { address, balance, nonce };
}

/** Runs `action` and asserts it left the account's balance and nonce as they were: no transaction, no gas. */
export async function expectNoGasSpent<T>(
  provider: JsonRpcProvider,
  address: string,
  action: () => Promise<T>,
): Promise<T> {
  const before = await accountState(provider, address);
  const result = await action();
  const after = await accountState(provider, address);
  const answered = (result as Partial<ApiResponse>)?.text ?? "";
  expect(after.nonce, `nonce unchanged (the service answered ${answered})`).to.equal(before.nonce);
  expect(after.balance, `balance unchanged (the service answered ${answered})`).to.equal(before.balance);
  return result;
}

/** No response text and no line the service printed contains a key (or API key) a test used. */
export function expectNoSecretsIn(responseTexts: string[], serviceOutput: string): void {
  expect(responseTexts.length, "responses were captured").to.be.greaterThan(0);
  expect(serviceOutput, "service output was captured").to.include('"msg":"request"');
  const leakingResponses = responseTexts.filter((text) => leakedSecrets(text).length > 0);
  expect(leakingResponses, "responses carrying a key").to.deep.equal([]);
  const leakingLines = serviceOutput.split("\n").filter((line) => leakedSecrets(line).length > 0);
  expect(leakingLines, "log lines carrying a key").to.deep.equal([]);
}

/**
 * Requests racing one Idempotency-Key: each answered 200, 202 or 409 IDEMPOTENCY_KEY_IN_USE, and those
 * accepted (at least one) name one operation and one transaction. Answers the accepted ones.
 */
export function expectOneWriteOfRace(answers: ApiResponse[]): ApiResponse[] {
  for (const res of answers) {
    expect([200, 202, 409], res.text).to.include(res.status);
    if (res.status === 409) expectError(res, 409, "IDEMPOTENCY_KEY_IN_USE");
  }
  const accepted = answers.filter((r) => r.status < 300);
  expect(accepted.length, "at least the first runs").to.be.greaterThan(0);
  expect(new Set(accepted.map((r) => r.body.operationId)).size, "one operation").to.equal(1);
  expect(new Set(accepted.map((r) => r.body.transactionHash)).size, "one transaction").to.equal(1);
  return accepted;
}
