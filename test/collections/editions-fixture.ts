/**
 * What the editions index tests share: NFTEditions and a bare OpenZeppelin ERC1155Supply deployed
 * directly with ethers (the service's /nft routes for them are not what these tests are about), and
 * the comparison of what the index answers with balanceOf and totalSupply on the chain.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { expect } from "chai";
import { Contract, ContractFactory, ZeroAddress, getAddress, type Wallet } from "ethers";
import { ROOT, type ApiClient } from "../api/harness";

function factory(artifactPath: string, wallet: Wallet): ContractFactory {
  const artifact = JSON.parse(readFileSync(path.join(ROOT, "artifacts", artifactPath), "utf8")) as {
    abi: [];
    bytecode: string;
  };
  return new ContractFactory(artifact.abi, artifact.bytecode, wallet);
}

/** Deploys contracts/NFTEditions.sol from `wallet` with `editions` open editions (ids 1.., free, 1,000 a mint). */
export async function deployEditionsDirectly(wallet: Wallet, editions = 3): Promise<Contract> {
  const contract = (await factory("contracts/NFTEditions.sol/NFTEditions.json", wallet).deploy(
    "Editions",
    "ED",
    "ipfs://editions/",
    wallet.address,
    0n,
    ZeroAddress,
  )) as Contract;
  await contract.waitForDeployment();
  for (let i = 0; i < editions; i++) await (await contract.createEdition(0n, 0n, 1_000n)).wait();
  return contract;
}

/** Deploys contracts/reference/ERC1155SupplyReference.sol (OpenZeppelin's ERC1155Supply, a free mint of any id). */
export async function deployBareErc1155(wallet: Wallet): Promise<Contract> {
  const contract = (await factory(
    "contracts/reference/ERC1155SupplyReference.sol/ERC1155SupplyReference.json",
    wallet,
  ).deploy(0n)) as Contract;
  await contract.waitForDeployment();
  return contract;
}

/** Every page of `url` (an index route answering `key` and `cursor`), with `limit` a page. */
export async function allPages<T>(api: ApiClient, url: string, key: string, limit: number): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  const join = url.includes("?") ? "&" : "?";
  for (;;) {
    const res = await api.get(`${url}${join}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
    expect(res.status, res.text).to.equal(200);
    items.push(...(res.body[key] as T[]));
    cursor = res.body.cursor as string | undefined;
    if (!cursor) return items;
  }
}

/**
 * What the index says of an ERC-1155 equals the chain: each edition's supply (totalSupply(id)) and
 * holders, each holder's amount of each edition (balanceOf), most first, none left out; the
 * collection's supply and holders; each holder's wallet with amounts.
 */
export async function expectEditionsEqualChain(
  api: ApiClient,
  contract: Contract,
  ids: bigint[],
  accounts: string[],
): Promise<void> {
  const address = await contract.getAddress();
  const view = (await api.get(`/collections/${address}`)).body;
  expect(view.standard).to.equal("erc1155");
  const balances = new Map<string, bigint>(); // "id:holder"
  for (const id of ids)
    for (const account of accounts) {
      const amount = (await contract.balanceOf(account, id)) as bigint;
      if (amount > 0n) balances.set(`${id}:${getAddress(account)}`, amount);
    }
  let supply = 0n;
  const expectedEditions: Array<{ tokenId: string; supply: string; holders: number }> = [];
  for (const id of ids) {
    const editionSupply = (await contract["totalSupply(uint256)"](id)) as bigint;
    supply += editionSupply;
    const holders = accounts
      .map((a) => ({ address: getAddress(a), amount: balances.get(`${id}:${getAddress(a)}`) ?? 0n }))
      .filter((h) => h.amount > 0n)
      .sort((a, b) => Number(b.amount - a.amount) || a.address.toLowerCase().localeCompare(b.address.toLowerCase()));
    if (editionSupply > 0n || holders.length > 0)
      expectedEditions.push({ tokenId: id.toString(), supply: editionSupply.toString(), holders: holders.length });
    const listed = await allPages<{ address: string; amount: string }>(
      api,
      `/collections/${address}/owners?tokenId=${id}`,
      "owners",
      2,
    );
    expect(
      listed.map((o) => ({ address: o.address, amount: o.amount })),
      `holders of edition ${id}, most first`,
    ).to.deep.equal(holders.map((h) => ({ address: h.address, amount: h.amount.toString() })));
  }
  expect(
    (view.editions as Array<{ tokenId: string }>).filter((e) => ids.includes(BigInt(e.tokenId))),
    "editions",
  ).to.deep.equal(expectedEditions);
  expect(BigInt(view.totalSupply as string), "totalSupply").to.equal(supply);
  const totals = accounts
    .map((a) => ({
      address: getAddress(a),
      amount: ids.reduce((sum, id) => sum + (balances.get(`${id}:${getAddress(a)}`) ?? 0n), 0n),
    }))
    .filter((t) => t.amount > 0n);
  expect(view.holders, "holders").to.equal(totals.length);
  for (const account of accounts) {
    const wallet = await allPages<{ tokenId: string; amount: string }>(
      api,
      `/collections/${address}/wallets/${account}`,
      "holdings",
      1,
    );
    const expected = ids
      .map((id) => ({ tokenId: id.toString(), amount: balances.get(`${id}:${getAddress(account)}`) ?? 0n }))
      .filter((h) => h.amount > 0n)
      .map((h) => ({ tokenId: h.tokenId, amount: h.amount.toString() }));
    expect(wallet, `holdings of ${account}`).to.deep.equal(expected);
  }
}
