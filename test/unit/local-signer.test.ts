import { expect } from "chai";
import { Wallet } from "ethers";
import { LocalWalletSigner } from "../../server/wallets/local-signer";
import { MasterKey } from "../../server/wallets/master-key";

describe("a local wallet's signer", function () {
  it("signs through libsecp256k1 the very bytes ethers' Wallet signs, for 50 keys and both transaction types", async function () {
    for (let i = 0; i < 50; i++) {
      const wallet = Wallet.createRandom();
      const masterKey = MasterKey.generate();
      const sealed = masterKey.sealWalletKey(wallet.address, Buffer.from(wallet.privateKey.slice(2), "hex"));
      const signer = new LocalWalletSigner(wallet.address, sealed, masterKey);
      const fees =
        i % 2 ? { type: 2, maxFeePerGas: 10n ** 9n, maxPriorityFeePerGas: 10n } : { type: 0, gasPrice: 10n ** 9n };
      const tx = {
        chainId: 31337n,
        nonce: i,
        to: wallet.address,
        data: "0x1234",
        value: 5n,
        gasLimit: 50_000n,
        ...fees,
      };
      expect(await signer.signTransaction(tx)).to.equal(await wallet.signTransaction(tx));
    }
  });
});
