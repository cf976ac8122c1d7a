/**
 * What every /nft operation file builds for itself on the shared node and service: its own
 * funded keys, its own collection and its own HTTP client, so that no file depends on what
 * another one did (and any one of them runs alone).
 */
import { expect } from "chai";
import { Wallet, parseEther, type JsonRpcProvider } from "ethers";
import type { CollectionParams } from "../../../server/chain/collection";
import { expectError, expectNoGasSpent, expectNoSecretsIn } from "../expectations";
import {
  AnvilNode,
  ApiClient,
  ServiceProcess,
  deployBytecode,
  deployDirectly,
  directProvider,
  fundedWallet,
  type ApiResponse,
} from "../harness";
import { sharedService, type SharedService } from "../shared-service";

/** What scripts/deploy.ts and POST /nft/deploy use when given nothing (server/chain/collection.ts). */
export const DEFAULT_BASE_URI = "ipfs://bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi/";
export const DEFAULT_COST = parseEther("0.01");

/** Init code of a contract whose every call returns the word 42: code, but no ERC-721 (nor ERC-165). */
const ANSWERS_42 = "0x600a600c600039600a6000f3602a60005260206000f3";
/** Init code of a contract whose every call reverts without data: no supportsInterface at all. */
const ALWAYS_REVERTS = "0x6005600c60003960056000f360006000fd";

export interface NftFixture {
  /** The node and the service the file's requests go to: the shared ones, or the file's own (anvil). */
  shared: Pick<SharedService, "service"> & { node: { rpcUrl: string } };
  /** This file's client: the secret scan reads this file's responses. */
  api: ApiClient;
  provider: JsonRpcProvider;
  /** A fresh funded key: deploys the file's collections, so it owns them. */
  owner: Wallet;
  /** The file's reference collection, deployed with the defaults by `owner` (unless `collection: false`). */
  collection: string;
  /** Another fresh key with 100 ether. */
  fundedWallet(): Promise<Wallet>;
  mint(key: string, contractAddress: string, mintAmount: unknown): Promise<ApiResponse>;
  /** Deploys a collection through POST /nft/deploy (by `owner` unless told) and returns its address. */
  deployThroughApi(fields?: Record<string, unknown>, key?: string): Promise<string>;
}

/**
 * Registers a `before` hook that builds the file's fixture; read its fields from tests and later
 * hooks. `collection`: the parameters of the file's collection, or false for none. `chain`: "anvil"
 * runs the file on a node and a service of its own, Foundry's anvil instead of the shared `hardhat
 * node` (stopped after the file).
 */
export function nftFixture(
  options: { collection?: Partial<CollectionParams> | false; chain?: "hardhat" | "anvil" } = {},
): NftFixture {
  const fixture = {} as NftFixture;
  let own: { node: AnvilNode; service?: ServiceProcess } | undefined;
  before(async function () {
    this.timeout(150_000);
    const shared = options.chain === "anvil" ? await anvilService((started) => (own = started)) : await sharedService();
    const provider = shared.provider;
    const api = new ApiClient(shared.service.url);
    const owner = await fundedWallet(provider);
    Object.assign(fixture, {
      shared,
      api,
      provider,
      owner,
      fundedWallet: () => fundedWallet(provider),
      mint: (key: string, contractAddress: string, mintAmount: unknown) =>
        api.post("/nft/mint", { privateKey: key, contractAddress, mintAmount }),
      async deployThroughApi(fields: Record<string, unknown> = {}, key: string = owner.privateKey) {
        const res = await api.post("/nft/deploy", { privateKey: key, ...fields });
        expect(res.status, res.text).to.equal(201);
        return res.body.contractAddress as string;
      },
    });
    if (options.collection !== false) {
      fixture.collection = await deployDirectly(owner.connect(provider), options.collection ?? {});
    }
  });
  after(async function () {
    if (!own) return;
    this.timeout(30_000);
    fixture.provider?.destroy();
    await own.service?.stop();
    await own.node.stop();
  });
  return fixture;
}

/** An anvil node and a service on it, told to `keep` as soon as each is up (so that `after` stops what started). */
async function anvilService(
  keep: (started: { node: AnvilNode; service?: ServiceProcess }) => void,
): Promise<NftFixture["shared"] & { provider: JsonRpcProvider }> {
  const node = await AnvilNode.start();
  const started: { node: AnvilNode; service?: ServiceProcess } = { node };
  keep(started);
  started.service = await ServiceProcess.start({ rpcUrl: node.rpcUrl, env: { TX_TIMEOUT_MS: "30000" } });
  return { node, service: started.service, provider: directProvider(node.rpcUrl) };
}

/**
 * The route at an address that holds no ERC-721 collection: 404 CONTRACT_NOT_FOUND at an EOA, 422
 * UNSUPPORTED_CONTRACT at code that answers 42 to every call (and, with `revertsEverywhere`, at
 * code that reverts on every call); the caller spends no gas either way.
 */
export function describeWithoutCollection(
  f: NftFixture,
  route: string,
  call: (contractAddress: string) => Promise<ApiResponse>,
  caller: () => string,
  options: { revertsEverywhere?: boolean } = {},
): void {
  describe("an address that holds no ERC-721 collection", function () {
    const eoa = Wallet.createRandom().address;
    let answers42: string;
    let reverts: string;

    before(async function () {
      // A key of its own, so that no key the service signs with sees its nonce move.
      const deployer = (await f.fundedWallet()).connect(f.provider);
      answers42 = await deployBytecode(deployer, ANSWERS_42);
      if (options.revertsEverywhere) reverts = await deployBytecode(deployer, ALWAYS_REVERTS);
    });

    it(`${route} at an address without code (an EOA) answers 404 CONTRACT_NOT_FOUND and spends no gas`, async function () {
      const res = await expectNoGasSpent(f.provider, caller(), () => call(eoa));
      expectError(res, 404, "CONTRACT_NOT_FOUND");
    });

    it(`${route} at a contract that answers 42 to every call answers 422 UNSUPPORTED_CONTRACT and spends no gas`, async function () {
      const res = await expectNoGasSpent(f.provider, caller(), () => call(answers42));
      expectError(res, 422, "UNSUPPORTED_CONTRACT");
    });

    if (options.revertsEverywhere) {
      it(`${route} at a contract without supportsInterface (reverts on every call) answers 422 UNSUPPORTED_CONTRACT`, async function () {
        const res = await expectNoGasSpent(f.provider, caller(), () => call(reverts));
        expectError(res, 422, "UNSUPPORTED_CONTRACT");
      });
    }
  });
}

/** The file's last test: none of its responses, and no line the service printed, carries a key. */
export function describeSecrets(f: NftFixture): void {
  describe("secrets", function () {
    it("no response body and no log line contains a private key or the API key used in the tests", function () {
      expectNoSecretsIn(f.api.responseTexts, f.shared.service.output());
    });
  });
}
