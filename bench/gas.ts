/**
 * Gas benchmark: NFTCollection against an OpenZeppelin ERC721Enumerable collection and a plain ERC721A one;
 * then NFTEditions (ERC-1155) against a bare OpenZeppelin ERC1155Supply.
 *
 *   npx hardhat run bench/gas.ts      (npm run bench:gas)
 *
 * Every row is measured from the same snapshot, so one measurement never warms storage for the next.
 * "warm" rows run on a contract where another account has already minted a token (the steady state of
 * a live collection); "first-ever" is the very first mint on a freshly deployed contract. In every row
 * the receiving account holds no tokens before the call. Exits non-zero when a target is missed.
 *
 * Editions: edition 1 of NFTEditions (capped at MAX_SUPPLY, so its supply check runs) against id 1 of the
 * reference, each warmed by another account's mint of that id; an airdrop's gas is divided by its recipients,
 * fresh addresses that hold nothing.
 *
 * Checkout (a price in an ERC-20 payment token, TestUSD): a token-priced mint(5) against, side by side, a
 * native-priced mint(5) of the same contract plus one bare ERC-20 transferFrom of the same token and amount
 * into it, all from one snapshot where another account already minted with the token (the contract holds
 * some) and the minter has approved both the contract and the bare transfer's sender without limit (so
 * neither transferFrom writes an allowance). The same for an edition; mintWithPermit is printed beside it.
 */
import { ethers, network } from "hardhat";
import { takeSnapshot } from "@nomicfoundation/hardhat-network-helpers";
import type { ContractRunner, ContractTransactionResponse } from "ethers";
import { checkoutGasChecks, editionsGasChecks, gasChecks, verdict } from "./checks";

const COST = ethers.parseEther("0.01");
const MAX_SUPPLY = 10_000n;
const MAX_PER_TX = 10n;
const AIRDROP_RECIPIENTS = 10;
// Targets: GAS_TARGETS in ./checks.

/** The part of the ABI all three contracts share. */
interface Collection {
  connect(runner: ContractRunner): Collection;
  mint(amount: bigint, overrides: { value: bigint }): Promise<ContractTransactionResponse>;
  mintForFree(amount: bigint, receiver: string): Promise<ContractTransactionResponse>;
  transferFrom(from: string, to: string, tokenId: bigint): Promise<ContractTransactionResponse>;
  totalSupply(): Promise<bigint>;
}

/** The part of the ABI NFTEditions and the ERC1155Supply reference share. */
interface Editions {
  connect(runner: ContractRunner): Editions;
  mint(id: bigint, amount: bigint, overrides: { value: bigint }): Promise<ContractTransactionResponse>;
  airdrop(id: bigint, recipients: string[], amounts: bigint[]): Promise<ContractTransactionResponse>;
}

async function gasOf(tx: Promise<ContractTransactionResponse>): Promise<bigint> {
  const receipt = await (await tx).wait();
  if (!receipt) throw new Error("no receipt");
  return receipt.gasUsed;
}

async function main(): Promise<void> {
  if (network.name !== "hardhat") throw new Error("run this on the in-process hardhat network");
  const [owner, warmer, alice, carol] = await ethers.getSigners();

  const deploy = async (name: string, args: unknown[]) => {
    const contract = await ethers.deployContract(name, args, owner);
    await contract.waitForDeployment();
    return contract as unknown as Collection;
  };
  const contracts: Record<string, Collection> = {
    NFTCollection: await deploy("NFTCollection", ["Bench", "BNCH", "ipfs://bench/", COST, MAX_SUPPLY, MAX_PER_TX]),
    ERC721A: await deploy("ERC721AReference", [COST]),
    Enumerable: await deploy("EnumerableReference", [COST]),
  };
  const names = Object.keys(contracts);

  type Measure = (c: Collection) => Promise<bigint>;
  const firstEver: Record<string, Measure> = {
    "mint(1) first-ever": (c) => gasOf(c.connect(alice).mint(1n, { value: COST })),
  };
  const warm: Record<string, Measure> = {
    "mint(1) warm": (c) => gasOf(c.connect(alice).mint(1n, { value: COST })),
    "mint(5) warm": (c) => gasOf(c.connect(alice).mint(5n, { value: COST * 5n })),
    "mintForFree(5) warm": (c) => gasOf(c.connect(owner).mintForFree(5n, alice.address)),
    "transferFrom first of a 10-batch": async (c) => {
      const first = (await c.totalSupply()) + 1n;
      await (await c.connect(alice).mint(MAX_PER_TX, { value: COST * MAX_PER_TX })).wait();
      return gasOf(c.connect(alice).transferFrom(alice.address, carol.address, first));
    },
    "transferFrom last of a 10-batch": async (c) => {
      const last = (await c.totalSupply()) + MAX_PER_TX;
      await (await c.connect(alice).mint(MAX_PER_TX, { value: COST * MAX_PER_TX })).wait();
      return gasOf(c.connect(alice).transferFrom(alice.address, carol.address, last));
    },
  };

  const results: Record<string, Record<string, bigint>> = {};
  const run = async (rows: Record<string, Measure>) => {
    const snapshot = await takeSnapshot();
    for (const [row, measure] of Object.entries(rows)) {
      results[row] = {};
      for (const name of names) {
        results[row][name] = await measure(contracts[name]);
        await snapshot.restore();
      }
    }
  };

  await run(firstEver);
  for (const name of names) await (await contracts[name].connect(warmer).mint(1n, { value: COST })).wait();
  await run(warm);

  const ratio = (a: bigint, b: bigint) => Number(a) / Number(b);
  const table = Object.fromEntries(
    Object.entries(results).map(([row, gas]) => [
      row,
      {
        NFTCollection: Number(gas.NFTCollection),
        ERC721A: Number(gas.ERC721A),
        Enumerable: Number(gas.Enumerable),
        "ours/ERC721A": ratio(gas.NFTCollection, gas.ERC721A).toFixed(3),
        "ours/Enumerable": ratio(gas.NFTCollection, gas.Enumerable).toFixed(3),
      },
    ]),
  );
  console.log(`gasUsed from receipts (cost ${ethers.formatEther(COST)} ETH, maxMintAmountPerTx ${MAX_PER_TX})`);
  console.table(table);

  const mint5 = results["mint(5) warm"];
  const vsA = ratio(mint5.NFTCollection, mint5.ERC721A);
  const vsEnum = ratio(mint5.NFTCollection, mint5.Enumerable);
  const editions = await measureEditions();
  const checkout = await measureCheckout();
  process.exitCode = verdict([
    ...gasChecks({ vsErc721a: vsA, vsEnumerable: vsEnum }),
    ...editionsGasChecks({
      mint: ratio(editions["mint(id, 5) warm"].NFTEditions, editions["mint(id, 5) warm"].ERC1155Supply),
      airdrop: ratio(
        editions[`airdrop per recipient (${AIRDROP_RECIPIENTS})`].NFTEditions,
        editions[`airdrop per recipient (${AIRDROP_RECIPIENTS})`].ERC1155Supply,
      ),
    }),
    ...checkoutGasChecks(checkout),
  ]);
}

/** NFTEditions against the bare ERC1155Supply reference, on token id 1 of each; prints its table. */
async function measureEditions(): Promise<Record<string, Record<string, bigint>>> {
  const [owner, warmer, alice] = await ethers.getSigners();
  const editions = (await ethers.deployContract(
    "NFTEditions",
    ["Bench Editions", "BNCE", "ipfs://bench/", ethers.ZeroAddress, 0n, ethers.ZeroAddress],
    owner,
  )) as unknown as Editions & { createEdition(...args: bigint[]): Promise<ContractTransactionResponse> };
  await (await editions.createEdition(COST, MAX_SUPPLY, MAX_PER_TX)).wait();
  const reference = (await ethers.deployContract("ERC1155SupplyReference", [COST], owner)) as unknown as Editions;
  const contracts: Record<string, Editions> = { NFTEditions: editions, ERC1155Supply: reference };
  const id = 1n;
  for (const c of Object.values(contracts)) await (await c.connect(warmer).mint(id, 1n, { value: COST })).wait();

  // Fresh, non-precompile addresses: each recipient's balance slot and account are cold, as in a real drop.
  const recipients = Array.from({ length: AIRDROP_RECIPIENTS }, (_, i) =>
    ethers.getAddress(ethers.dataSlice(ethers.id(`bench recipient ${i}`), 12)),
  );
  const rows: Record<string, (c: Editions) => Promise<bigint>> = {
    "mint(id, 1) warm": (c) => gasOf(c.connect(alice).mint(id, 1n, { value: COST })),
    "mint(id, 5) warm": (c) => gasOf(c.connect(alice).mint(id, 5n, { value: COST * 5n })),
    [`airdrop per recipient (${AIRDROP_RECIPIENTS})`]: async (c) => {
      const amounts = recipients.map(() => 1n);
      return (await gasOf(c.connect(owner).airdrop(id, recipients, amounts))) / BigInt(AIRDROP_RECIPIENTS);
    },
  };
  const results: Record<string, Record<string, bigint>> = {};
  const snapshot = await takeSnapshot();
  for (const [row, measure] of Object.entries(rows)) {
    results[row] = {};
    for (const [name, c] of Object.entries(contracts)) {
      results[row][name] = await measure(c);
      await snapshot.restore();
    }
  }
  console.log(
    `editions, token id 1 (cost ${ethers.formatEther(COST)} ETH, maxSupply ${MAX_SUPPLY}, maxMintAmountPerTx ${MAX_PER_TX})`,
  );
  console.table(
    Object.fromEntries(
      Object.entries(results).map(([row, gas]) => [
        row,
        {
          NFTEditions: Number(gas.NFTEditions),
          ERC1155Supply: Number(gas.ERC1155Supply),
          "ours/ERC1155Supply": (Number(gas.NFTEditions) / Number(gas.ERC1155Supply)).toFixed(3),
        },
      ]),
    ),
  );
  return results;
}

/** An ERC-20 payment token with EIP-2612 permits (TestUSD), as the bench uses it. */
interface PaymentToken {
  connect(runner: ContractRunner): PaymentToken;
  getAddress(): Promise<string>;
  mint(to: string, amount: bigint): Promise<ContractTransactionResponse>;
  approve(spender: string, amount: bigint): Promise<ContractTransactionResponse>;
  transferFrom(from: string, to: string, amount: bigint): Promise<ContractTransactionResponse>;
  nonces(owner: string): Promise<bigint>;
  name(): Promise<string>;
}

/** NFTCollection's or NFTEditions' shared ABI (`C`) with the payment token's functions. */
type TokenPriced<C extends { connect(runner: ContractRunner): C }> = Omit<C, "connect"> & {
  connect(runner: ContractRunner): TokenPriced<C>;
  getAddress(): Promise<string>;
  setPaymentToken(token: string): Promise<ContractTransactionResponse>;
  mintWithPermit(...args: unknown[]): Promise<ContractTransactionResponse>;
};

/**
 * Token-priced mint(5) against a native-priced mint(5) plus one bare transferFrom of the price, on NFTCollection
 * and on an edition of NFTEditions; prints its table and returns the two ratios.
 */
async function measureCheckout(): Promise<{ collection: number; editions: number }> {
  const [owner, warmer, alice, relayer] = await ethers.getSigners();
  const TOKEN_COST = 12_500_000n; // 12.5 TUSD (6 decimals)
  const AMOUNT = 5n;
  const price = TOKEN_COST * AMOUNT;
  const token = (await ethers.deployContract("TestUSD", [], owner)) as unknown as PaymentToken;
  const tokenAddress = await token.getAddress();
  const collection = (await ethers.deployContract(
    "NFTCollection",
    ["Bench", "BNCH", "ipfs://bench/", TOKEN_COST, MAX_SUPPLY, MAX_PER_TX],
    owner,
  )) as unknown as TokenPriced<Collection>;
  const editions = (await ethers.deployContract(
    "NFTEditions",
    ["Bench Editions", "BNCE", "ipfs://bench/", ethers.ZeroAddress, 0n, ethers.ZeroAddress],
    owner,
  )) as unknown as TokenPriced<Editions> & { createEdition(...args: bigint[]): Promise<ContractTransactionResponse> };
  await (await editions.createEdition(TOKEN_COST, MAX_SUPPLY, MAX_PER_TX)).wait();
  const id = 1n;
  const targets = { NFTCollection: await collection.getAddress(), NFTEditions: await editions.getAddress() };
  for (const account of [warmer, alice]) {
    await (await token.mint(account.address, 1_000_000n * TOKEN_COST)).wait();
    for (const spender of [...Object.values(targets), relayer.address]) {
      await (await token.connect(account).approve(spender, ethers.MaxUint256)).wait();
    }
  }
  // The warm state of a live sale: another account's mint, paid in the token, before any measured call.
  await (await collection.connect(owner).setPaymentToken(tokenAddress)).wait();
  await (await editions.connect(owner).setPaymentToken(tokenAddress)).wait();
  await (await collection.connect(warmer).mint(1n, { value: 0n })).wait();
  await (await editions.connect(warmer).mint(id, 1n, { value: 0n })).wait();

  const permitOf = async (spender: string, value: bigint) => {
    const { chainId } = await ethers.provider.getNetwork();
    const domain = { name: await token.name(), version: "1", chainId, verifyingContract: tokenAddress };
    const types = {
      Permit: ["owner", "spender", "value", "nonce", "deadline"].map((name) => ({
        name,
        type: name === "owner" || name === "spender" ? "address" : "uint256",
      })),
    };
    const deadline = BigInt(Math.floor(Date.now() / 1000)) + 3600n;
    const nonce = await token.nonces(alice.address);
    const sig = ethers.Signature.from(
      await alice.signTypedData(domain, types, { owner: alice.address, spender, value, nonce, deadline }),
    );
    return [deadline, sig.v, sig.r, sig.s] as const;
  };

  type Row = Record<string, bigint>;
  const measure = async (rows: Record<string, () => Promise<bigint>>): Promise<Row> => {
    const snapshot = await takeSnapshot();
    const out: Row = {};
    for (const [row, run] of Object.entries(rows)) {
      out[row] = await run();
      await snapshot.restore();
    }
    return out;
  };
  const bare = () => gasOf(token.connect(relayer).transferFrom(alice.address, targets.NFTCollection, price));
  const bareEditions = () => gasOf(token.connect(relayer).transferFrom(alice.address, targets.NFTEditions, price));
  const rows721 = await measure({
    token: () => gasOf(collection.connect(alice).mint(AMOUNT, { value: 0n })),
    native: async () => {
      await (await collection.connect(owner).setPaymentToken(ethers.ZeroAddress)).wait();
      return gasOf(collection.connect(alice).mint(AMOUNT, { value: price }));
    },
    transferFrom: bare,
    permit: async () => {
      // A fresh allowance of exactly the price, set by the permit (the standing approval is dropped first).
      await (await token.connect(alice).approve(targets.NFTCollection, 0n)).wait();
      const [deadline, v, r, s] = await permitOf(targets.NFTCollection, price);
      return gasOf(collection.connect(relayer).mintWithPermit(alice.address, AMOUNT, deadline, v, r, s));
    },
  });
  const rows1155 = await measure({
    token: () => gasOf(editions.connect(alice).mint(id, AMOUNT, { value: 0n })),
    native: async () => {
      await (await editions.connect(owner).setPaymentToken(ethers.ZeroAddress)).wait();
      return gasOf(editions.connect(alice).mint(id, AMOUNT, { value: price }));
    },
    transferFrom: bareEditions,
    permit: async () => {
      await (await token.connect(alice).approve(targets.NFTEditions, 0n)).wait();
      const [deadline, v, r, s] = await permitOf(targets.NFTEditions, price);
      return gasOf(editions.connect(relayer).mintWithPermit(alice.address, AMOUNT, id, deadline, v, r, s));
    },
  });
  const ratioOf = (r: Row) => Number(r.token) / Number(r.native + r.transferFrom);
  console.log(
    `checkout: a price of ${TOKEN_COST} TUSD units (6 decimals) per token, ${AMOUNT} tokens; the contract already holds TUSD`,
  );
  const line = (r: Row) => ({
    "token mint(5)": Number(r.token),
    "native mint(5)": Number(r.native),
    "bare transferFrom": Number(r.transferFrom),
    "native + transferFrom": Number(r.native + r.transferFrom),
    "token / (native + transferFrom)": ratioOf(r).toFixed(3),
    "mintWithPermit(5)": Number(r.permit),
  });
  console.table({ NFTCollection: line(rows721), "NFTEditions (id 1)": line(rows1155) });
  return { collection: ratioOf(rows721), editions: ratioOf(rows1155) };
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
