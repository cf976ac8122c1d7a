/**
 * Issue 57: editions with what the service holds (API.md, "Wallets" and "Access keys"). A held
 * wallet deploys an NFTEditions contract and creates its edition; another held wallet mints it;
 * a daily spend limit refuses an edition mint whose value passes it as it refuses an ERC-721 mint
 * (409 SPEND_LIMIT_EXCEEDED, nothing signed); a key limited to one collection acts on its edition
 * contract and gets 403 on any other, as for ERC-721. One node and one service for the file.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import { Contract, getAddress, parseEther, type JsonRpcProvider } from "ethers";
import { editionsInterface } from "../../../server/chain/editions";
import { expectError, expectNoGasSpent, expectNoSecretsIn } from "../expectations";
import {
  ApiClient,
  ChainNode,
  collectionAt,
  deployDirectly,
  directProvider,
  fundedWallet,
  type ApiResponse,
  type ServiceProcess,
} from "../harness";
import { fund, KeyedClient, newMasterKey, startWalletService } from "../../wallets/fixture";

const COST = parseEther("0.01");

describe("editions with held wallets, spend limits and limited access keys (issue 57)", function () {
  this.timeout(60_000);
  let node: ChainNode;
  let provider: JsonRpcProvider;
  let dataDir: string;
  let service: ServiceProcess;
  let api: ApiClient;
  let root: KeyedClient;
  /** The held wallet that owns the file's edition contract. */
  let shop: string;
  let editions: string;
  let onChain: Contract;
  let tokenId: string;
  /** An ERC-721 collection (the reference, cost 0.01 ether) beside it. */
  let erc721: string;

  before(async function () {
    this.timeout(180_000);
    node = await ChainNode.start();
    provider = directProvider(node.rpcUrl);
    dataDir = mkdtempSync(path.join(tmpdir(), "editions-wallets-"));
    service = await startWalletService(node.rpcUrl, dataDir, {
      WALLET_MASTER_KEY: newMasterKey(),
      TX_TIMEOUT_MS: "10000",
    });
    api = new ApiClient(service.url);
    root = new KeyedClient(api);
    shop = (await root.createWallet({ kind: "local", label: "shop" })).address;
    await fund(provider, shop);
    const deployed = await root.post("/nft/deploy", { from: "shop", standard: "erc1155", name: "Held", symbol: "HLD" });
    expect(deployed.status, deployed.text).to.equal(201);
    expect(deployed.body.from).to.equal(shop);
    editions = deployed.body.contractAddress;
    onChain = new Contract(editions, editionsInterface(), provider);
    tokenId = await newEdition(editions);
    erc721 = await deployDirectly((await fundedWallet(provider)).connect(provider), { cost: COST });
  });

  after(async function () {
    this.timeout(30_000);
    provider?.destroy();
    await service?.stop();
    await node?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  /** A new edition of `contractAddress` (0.01 ether, cap 100, 10 a transaction), created by the held wallet "shop"; its id. */
  async function newEdition(contractAddress: string, client = root): Promise<string> {
    const res = await client.post("/nft/createEdition", {
      from: "shop",
      contractAddress,
      cost: COST.toString(),
      maxSupply: 100,
      maxMintAmountPerTx: 10,
    });
    expect(res.status, res.text).to.equal(200);
    expect(res.body.from).to.equal(shop);
    return res.body.tokenId as string;
  }

  /** A new held wallet with 100 ether; its address. */
  async function heldWallet(label: string): Promise<string> {
    const { address } = await root.createWallet({ kind: "local", label });
    await fund(provider, address);
    return address;
  }

  const editionMint = (from: string, mintAmount: number, client = root, contractAddress = editions) =>
    client.post("/nft/mint", { from, contractAddress, tokenId, mintAmount });

  describe("a held wallet as from", function () {
    it("the owner's held wallet deployed the contract and created the edition: it owns them on chain", async function () {
      expect(await onChain.owner()).to.equal(shop);
      const [cost, maxSupply] = await onChain.edition(tokenId);
      expect([cost, maxSupply]).to.deep.equal([COST, 100n]);
    });

    it("an edition mint from a held wallet's label is signed by that wallet, pays cost × amount, and leaves nothing unfinished", async function () {
      const buyer = await heldWallet("buyer");
      const res = await editionMint("buyer", 2);
      expect(res.status, res.text).to.equal(200);
      expect(res.body).to.include({ from: buyer, tokenId, amount: "2", value: (2n * COST).toString() });
      const tx = await provider.getTransaction(res.body.transactionHash);
      expect(tx!.from).to.equal(buyer);
      expect(await onChain.balanceOf(buyer, tokenId)).to.equal(2n);
      const held = await root.get(`/wallets/${buyer}`);
      expect(held.status, held.text).to.equal(200);
      expect(held.body).to.include({ nextNonce: 1, unfinishedOperations: 0 });
    });
  });

  describe("a daily spend limit", function () {
    let limited: string;

    before(async function () {
      limited = await heldWallet("limited");
      // 0.025 ether: one mint of 2 (0.02 ether and its gas) fits; one of 3 (0.03 ether) does not, on either standard.
      const res = await root.patch(`/wallets/${limited}`, { dailySpendLimit: parseEther("0.025").toString() });
      expect(res.status, res.text).to.equal(200);
    });

    it("refuses an edition mint whose value passes it with 409 SPEND_LIMIT_EXCEEDED, as an ERC-721 mint: nothing signed, stored or minted", async function () {
      const before = (await root.get(`/wallets/${limited}`)).body;
      const [onEdition, on721] = await expectNoGasSpent(provider, limited, async () => [
        await editionMint("limited", 3),
        await root.post("/nft/mint", { from: "limited", contractAddress: erc721, mintAmount: 3 }),
      ]);
      const refused = expectError(onEdition, 409, "SPEND_LIMIT_EXCEEDED");
      expectError(on721, 409, "SPEND_LIMIT_EXCEEDED");
      // The same sentence but for the wei asked (the edition's mint gas is not the ERC-721's).
      const shape = (message: string) => message.replace(/\d+/g, "N");
      expect(shape(refused.message)).to.equal(shape(on721.body.error.message));
      expect(await onChain.balanceOf(limited, tokenId)).to.equal(0n);
      expect(await collectionAt(erc721, provider).balanceOf(limited)).to.equal(0n);
      expect((await root.get(`/wallets/${limited}`)).body).to.deep.equal(before);
    });

    it("lets an edition mint within it through, then refuses the next one that would pass it", async function () {
      const first = await editionMint("limited", 2);
      expect(first.status, first.text).to.equal(200);
      const spent = BigInt((await root.get(`/wallets/${limited}`)).body.policy.spentToday);
      expect(spent > 2n * COST && spent <= parseEther("0.025")).to.equal(true);
      const next = await expectNoGasSpent(provider, limited, () => editionMint("limited", 1));
      expectError(next, 409, "SPEND_LIMIT_EXCEEDED");
      expect(await onChain.balanceOf(limited, tokenId)).to.equal(2n);
      expect((await root.get(`/wallets/${limited}`)).body.policy.spentToday).to.equal(spent.toString());
    });
  });

  describe("an access key limited to the edition contract", function () {
    let scoped: KeyedClient;
    let otherEditions: string;
    let scopedBuyer: string;

    before(async function () {
      const made = await root.post("/access-keys", {
        name: "editions-only",
        scopes: ["nft:read", "nft:mint", "nft:configure"],
        collections: [editions.toLowerCase()],
      });
      expect(made.status, made.text).to.equal(201);
      scoped = root.as(made.body.key);
      scopedBuyer = await heldWallet("scoped-buyer");
      const other = await root.post("/nft/deploy", { from: "shop", standard: "erc1155" });
      expect(other.status, other.text).to.equal(201);
      otherEditions = other.body.contractAddress;
      await newEdition(otherEditions);
    });

    /** 403 FORBIDDEN naming the collection the key may not act on. */
    function expectForbiddenAt(res: ApiResponse, contractAddress: string): void {
      const error = expectError(res, 403, "FORBIDDEN");
      expect(error.details, res.text).to.deep.equal([
        { path: "collection", message: `the collection ${getAddress(contractAddress)}` },
      ]);
    }

    it("mints, creates an edition and reads on its edition contract", async function () {
      const minted = await editionMint("scoped-buyer", 1, scoped);
      expect(minted.status, minted.text).to.equal(200);
      expect(await newEdition(editions, scoped)).to.match(/^\d+$/);
      const supply = await scoped.post("/nft/total-supply", {
        from: "scoped-buyer",
        contractAddress: editions,
        tokenId,
      });
      expect(supply.status, supply.text).to.equal(200);
    });

    it("gets 403 FORBIDDEN naming the collection on another edition contract and on an ERC-721 collection, and nothing is sent", async function () {
      const nonces = () => Promise.all([shop, scopedBuyer].map((a) => provider.getTransactionCount(a)));
      const before = await nonces();
      for (const other of [otherEditions, erc721]) {
        const answers = await Promise.all([
          scoped.post("/nft/mint", {
            from: "scoped-buyer",
            contractAddress: other,
            ...(other === erc721 ? {} : { tokenId: "1" }),
            mintAmount: 1,
          }),
          scoped.post("/nft/createEdition", {
            from: "shop",
            contractAddress: other,
            cost: "1",
            maxSupply: 1,
            maxMintAmountPerTx: 1,
          }),
          scoped.post("/nft/setPaused", { from: "shop", contractAddress: other, state: true }),
          scoped.post("/nft/tokenURI", { from: "shop", contractAddress: other, tokenId: "1" }),
        ]);
        for (const res of answers) expectForbiddenAt(res, other);
      }
      expect(await nonces()).to.deep.equal(before);
      expect(await new Contract(otherEditions, editionsInterface(), provider).paused()).to.equal(false);
    });

    it("a key limited to the ERC-721 collection gets 403 on the edition contract", async function () {
      const made = await root.post("/access-keys", {
        name: "erc721-only",
        scopes: ["nft:mint"],
        collections: [erc721],
      });
      expect(made.status, made.text).to.equal(201);
      const res = await expectNoGasSpent(provider, scopedBuyer, () =>
        editionMint("scoped-buyer", 1, root.as(made.body.key)),
      );
      expectForbiddenAt(res, editions);
    });
  });

  describe("secrets", function () {
    it("no response body and no log line contains a key the file used", function () {
      expectNoSecretsIn(api.responseTexts, service.output());
    });
  });
});
