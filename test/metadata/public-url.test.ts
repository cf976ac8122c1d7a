/**
 * Hosted metadata on a chain that is not a local one (a node given Base Sepolia's id, 84532): the
 * default PUBLIC_URL (http://127.0.0.1:PORT) must never become a collection's base URI on chain.
 */
import { expect } from "chai";
import { JsonRpcProvider } from "ethers";
import { DEFAULT_COLLECTION, deployTransaction } from "../../server/chain/collection";
import { requirePublicUrlFor, unreachableRange } from "../../server/metadata/public-url";
import { expectError } from "../api/expectations";
import { ApiClient, ChainNode, ServiceProcess, fundedWallet } from "../api/harness";

describe("POST /collections/{address}/metadata/host and PUBLIC_URL", function () {
  describe("which PUBLIC_URL may go on which chain", function () {
    it("refuses loopback, private and link-local hosts on any chain but a local one; public hosts pass", function () {
      for (const url of ["http://127.0.0.1:3000", "http://localhost:3000", "http://10.0.0.7", "http://[::1]:3000"])
        expect(() => requirePublicUrlFor(84532n, url), url).to.throw(/PUBLIC_URL/);
      expect(unreachableRange("http://192.168.1.20/")).to.equal("private");
      expect(unreachableRange("http://169.254.1.1/")).to.equal("linkLocal");
      for (const url of ["https://nft.example.com", "https://203.0.113.9", "https://[2001:db8::1]"])
        expect(() => requirePublicUrlFor(11155111n, url), url).to.not.throw();
      expect(() => requirePublicUrlFor(31337n, "http://127.0.0.1:3000"), "the embedded chain").to.not.throw();
    });
  });

  describe("on a node with Base Sepolia's chain id and the default PUBLIC_URL", function () {
    let node: ChainNode;
    let provider: JsonRpcProvider;
    let service: ServiceProcess;

    before(async function () {
      this.timeout(180_000);
      node = await ChainNode.start(undefined, 84532);
      provider = new JsonRpcProvider(node.rpcUrl, 84532, { staticNetwork: true, cacheTimeout: -1 });
      service = await ServiceProcess.start({ rpcUrl: node.rpcUrl });
    });

    after(async function () {
      this.timeout(30_000);
      provider?.destroy();
      await service?.stop();
      await node?.stop();
    });

    it("answers 422 PUBLIC_URL_NOT_PUBLIC naming PUBLIC_URL, and sends nothing", async function () {
      this.timeout(60_000);
      const owner = (await fundedWallet(provider)).connect(provider);
      const deployed = (await (await owner.sendTransaction(await deployTransaction(DEFAULT_COLLECTION))).wait())!;
      const nonce = await provider.getTransactionCount(owner.address);
      const api = new ApiClient(service.url);
      const res = await api.post(`/collections/${deployed.contractAddress}/metadata/host`, {
        privateKey: owner.privateKey,
      });
      const error = expectError(res, 422, "PUBLIC_URL_NOT_PUBLIC");
      expect(error.message).to.include("PUBLIC_URL").and.include("127.0.0.1");
      expect(await provider.getTransactionCount(owner.address), "no transaction sent").to.equal(nonce);
    });
  });
});
