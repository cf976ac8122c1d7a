/**
 * What the collections tests share: a node's caps on eth_getLogs as hosted nodes word them (behind
 * the JSON-RPC proxy), collections minted fast in big batches, the plain OpenZeppelin ERC-721, and
 * the comparison of what the index answers with what the chain says.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { expect } from "chai";
import { Contract, ContractFactory, Wallet, getAddress, toQuantity, type JsonRpcProvider } from "ethers";
import { ROOT, sleep, TEST_API_KEY, type ApiClient, type JsonBody } from "../api/harness";
import type { BlockHeader } from "../../server/chain/block-feed";
import type { RpcProxy } from "../support/rpc-proxy";

/** The root key (API_KEY): POST /collections needs an access key in every mode. */
export const ROOT_KEY = { Authorization: `Bearer ${TEST_API_KEY}` };

/** The refusals a node behind `proxy` answers, until the returned function is called. */
export function capGetLogs(proxy: RpcProxy, caps: { maxBlocks: number; maxLogs: number }) {
  const refusals = { blocks: 0, logs: 0 };
  const stop = proxy.judgeAnswers("eth_getLogs", (params, result) => {
    const filter = params[0] as { fromBlock?: string; toBlock?: string; blockHash?: string };
    if (filter.blockHash === undefined) {
      const span = Number(filter.toBlock) - Number(filter.fromBlock) + 1;
      if (span > caps.maxBlocks) {
        refusals.blocks++;
        // geth-style nodes (BSC, many providers)
        return { code: -32000, message: `exceed maximum block range: ${caps.maxBlocks}` };
      }
    }
    const logs = result as Array<{ blockNumber: string }>;
    if (Array.isArray(logs) && logs.length > caps.maxLogs) {
      refusals.logs++;
      // Infura's wording: the range that would fit ends before the block of the first log past the cap
      const from = Number(filter.fromBlock);
      const end = Math.max(from, Number(logs[caps.maxLogs].blockNumber) - 1);
      return {
        code: -32005,
        message: `query returned more than ${caps.maxLogs} results. Try with this block range [${toQuantity(from)}, ${toQuantity(end)}].`,
      };
    }
    return undefined;
  });
  return { refusals, stop };
}

/** GET /collections/{address} until its index reflects `block` (or `timeoutMs` runs out). */
export async function indexedTo(api: ApiClient, address: string, block: number, timeoutMs = 60_000): Promise<JsonBody> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await api.get(`/collections/${address}`);
    expect(res.status, res.text).to.equal(200);
    if (res.body.indexedBlock !== null && res.body.indexedBlock >= block) return res.body;
    if (Date.now() > deadline) throw new Error(`index of ${address} still at ${res.body.indexedBlock}, not ${block}`);
    await sleep(200);
  }
}

/** Every holder the index lists, page after page. */
export async function allOwners(
  api: ApiClient,
  address: string,
  limit = 7,
): Promise<Array<{ address: string; tokens: string }>> {
  const owners: Array<{ address: string; tokens: string }> = [];
  let cursor: string | undefined;
  for (;;) {
    const res = await api.get(
      `/collections/${address}/owners?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
    );
    expect(res.status, res.text).to.equal(200);
    owners.push(...(res.body.owners as typeof owners));
    cursor = res.body.cursor as string | undefined;
    if (!cursor) return owners;
  }
}

/**
 * What the index says equals what the chain says: the supply, every holder's balanceOf (and no
 * holder left out), each holder's wallet against ownerOf of its ids, and ownerOf of sampled ids.
 */
export async function expectIndexEqualsChain(
  api: ApiClient,
  nft: Contract,
  { sample = [] as bigint[], supply }: { sample?: bigint[]; supply?: bigint } = {},
): Promise<void> {
  const address = await nft.getAddress();
  const view = (await api.get(`/collections/${address}`)).body;
  const owners = await allOwners(api, address, 50);
  const counted = owners.reduce((sum, o) => sum + BigInt(o.tokens), 0n);
  expect(BigInt(view.totalSupply as string), "totalSupply").to.equal(counted);
  if (supply !== undefined)
    expect(BigInt(view.totalSupply as string), "totalSupply against the chain").to.equal(supply);
  expect(view.holders, "holders").to.equal(owners.length);
  const balances = await Promise.all(owners.map((o) => nft.balanceOf(o.address) as Promise<bigint>));
  owners.forEach((o, i) => expect(BigInt(o.tokens), `balanceOf ${o.address}`).to.equal(balances[i]));
  const sorted = [...owners].sort(
    (a, b) =>
      Number(BigInt(b.tokens) - BigInt(a.tokens)) || a.address.toLowerCase().localeCompare(b.address.toLowerCase()),
  );
  expect(
    owners.map((o) => o.address),
    "most tokens first",
  ).to.deep.equal(sorted.map((o) => o.address));
  for (const tokenId of sample) {
    const res = await api.get(`/collections/${address}/tokens/${tokenId}`);
    expect(res.status, res.text).to.equal(200);
    expect(res.body.owner, `owner of ${tokenId}`).to.equal(getAddress(await nft.ownerOf(tokenId)));
  }
}

/** The wallet the index lists for `owner`, all pages. */
export async function indexedWallet(api: ApiClient, address: string, owner: string, limit = 1000): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (;;) {
    const res = await api.get(
      `/collections/${address}/wallets/${owner}?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
    );
    expect(res.status, res.text).to.equal(200);
    ids.push(...(res.body.tokenIds as string[]));
    cursor = res.body.cursor as string | undefined;
    if (!cursor) return ids;
  }
}

/** Deploys contracts/test/PlainERC721.sol (OpenZeppelin's ERC721, nothing more) from `wallet`. */
export async function deployPlainErc721(wallet: Wallet): Promise<Contract> {
  const artifact = JSON.parse(
    readFileSync(path.join(ROOT, "artifacts/contracts/test/PlainERC721.sol/PlainERC721.json"), "utf8"),
  ) as { abi: []; bytecode: string };
  const factory = new ContractFactory(artifact.abi, artifact.bytecode, wallet);
  const contract = await factory.deploy();
  await contract.waitForDeployment();
  return contract as Contract;
}

/**
 * Mines `count` empty blocks with one batch of evm_mine calls. Not hardhat_mine: the blocks it
 * reserves answer eth_getCode with nothing for contracts deployed before them (Hardhat 2.29).
 */
export async function mineEmptyBlocks(rpcUrl: string, count: number): Promise<void> {
  const res = await fetch(rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(
      Array.from({ length: count }, (_, id) => ({ jsonrpc: "2.0", id, method: "evm_mine", params: [] })),
    ),
  });
  const answers = (await res.json()) as Array<{ error?: unknown }>;
  if (answers.some((a) => a.error)) throw new Error("evm_mine refused");
}

/** The chain's head. */
export async function headOf(provider: JsonRpcProvider): Promise<number> {
  return Number(await provider.send("eth_blockNumber", []));
}

/**
 * Waits until the index stands exactly at the chain's head: after a reorg to a shorter branch, an
 * index still on the removed (longer) one would be past it, which indexedTo would take for done.
 */
export async function indexedAtHead(api: ApiClient, address: string, provider: JsonRpcProvider): Promise<void> {
  const head = await headOf(provider);
  for (const deadline = Date.now() + 20_000; ; await sleep(100)) {
    const view = await indexedTo(api, address, head);
    if (view.indexedBlock === head) return;
    if (Date.now() > deadline) throw new Error(`index at ${view.indexedBlock}, chain at ${head}`);
  }
}

/** A store test's block hash: block `n` of branch `branch` (one hex digit). */
export const blockHash = (n: number, branch = "0") => `0x${branch.repeat(2)}${n.toString(16).padStart(62, "0")}`;

/** A store test's block header: `n` of `branch`, its parent `n - 1` of `parentBranch`. */
export const blockOf = (n: number, branch = "0", parentBranch = branch): BlockHeader => ({
  number: n,
  hash: blockHash(n, branch),
  parentHash: blockHash(n - 1, parentBranch),
  transactions: [],
});
