import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect } from "chai";
import type { Wallet } from "ethers";
import { DEFAULT_COLLECTION, deployTransaction } from "../../server/chain/collection";
import { expectConfirmedWrite } from "../api/expectations";
import { ApiClient, collectionAt, fundedWallet, type ServiceProcess } from "../api/harness";
import { sharedService, type SharedService } from "../api/shared-service";
import type { SoftHsmToken } from "../support/softhsm";
import { KeyedClient, newMasterKey, startWalletService, tokenWithKey, walletEnv } from "../wallets/fixture";

/**
 * Vouchers signed by the wallets the service holds (API.md, "Drops"): a local wallet and a PKCS#11
 * (SoftHSM2) one each sign a voucher that a third address redeems, paying the gas, through the
 * API; the contract checks the signature, so a mint that succeeds is the check.
 */
describe("Vouchers signed by held wallets: local and PKCS#11", function () {
  let shared: SharedService;
  let hsm: SoftHsmToken;
  let dataDir: string;
  let service: ServiceProcess;
  let root: KeyedClient;
  let owner: Wallet;
  let buyer: Wallet;

  before(async function () {
    this.timeout(300_000);
    shared = await sharedService();
    ({ hsm } = await tokenWithKey("voucher-key"));
    dataDir = mkdtempSync(path.join(tmpdir(), "drops-vouchers-"));
    service = await startWalletService(shared.node.rpcUrl, dataDir, walletEnv(newMasterKey(), hsm));
    root = new KeyedClient(new ApiClient(service.url));
    [owner, buyer] = await Promise.all([fundedWallet(shared.provider), fundedWallet(shared.provider)]);
  });

  after(async function () {
    this.timeout(30_000);
    await service?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    hsm?.remove();
  });

  /** A collection deployed directly by `owner` with `voucherSigner`; a voucher of 2 from `from`, redeemed by the buyer. */
  async function redeemedVoucherOf(from: string, voucherSigner: string) {
    const sent = await owner
      .connect(shared.provider)
      .sendTransaction(await deployTransaction({ ...DEFAULT_COLLECTION, name: `Drop ${from}`, voucherSigner }));
    const collection = (await sent.wait())!.contractAddress!;
    const made = await root.post(`/collections/${collection}/vouchers`, {
      from,
      to: buyer.address,
      amount: 2,
      price: "1000",
    });
    expect(made.status, made.text).to.equal(200);
    const res = await root.api.post("/nft/mintWithVoucher", {
      privateKey: buyer.privateKey,
      contractAddress: collection,
      voucher: made.body.voucher,
      signature: made.body.signature,
    });
    await expectConfirmedWrite(res, shared.provider, {
      from: buyer.address,
      contractAddress: collection,
      extra: ["tokenIds", "value", "voucherId"],
    });
    const nft = collectionAt(collection, shared.provider);
    expect(await nft.balanceOf(buyer.address)).to.equal(2n);
    expect(await nft.voucherUsed(made.body.voucher.id)).to.equal(true);
    return made.body;
  }

  it("a local wallet's voucher is redeemed on chain by a third address that pays the gas", async function () {
    this.timeout(120_000);
    const wallet = await root.createWallet({ kind: "local", label: "voucher-local" });
    await redeemedVoucherOf("voucher-local", wallet.address);
  });

  it("a PKCS#11 (SoftHSM2) wallet's voucher is redeemed on chain by a third address that pays the gas", async function () {
    this.timeout(120_000);
    const wallet = await root.createWallet({ kind: "pkcs11", label: "voucher-hsm", keyLabel: "voucher-key" });
    const made = await redeemedVoucherOf("voucher-hsm", wallet.address);
    expect(made.signature).to.match(/^0x[0-9a-f]{130}$/);
  });
});
