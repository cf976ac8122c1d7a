import { expect } from "chai";
import { BrowserProvider, Interface, type Eip1193Provider } from "ethers";
import hre from "hardhat";
import { toChainApiError } from "../../server/chain/chain-errors";
import { collectionInterface } from "../../server/chain/collection";
import { FeeOracle } from "../../server/chain/fee-oracle";

describe("fee quotes and replacement fees (in-process Hardhat network)", function () {
  const provider = new BrowserProvider(hre.network.provider as unknown as Eip1193Provider);

  it("quotes EIP-1559 fees: maxFeePerGas above the latest base fee, the tip within it", async function () {
    const fees = await new FeeOracle(provider).quote(true);
    expect(fees.type).to.equal(2);
    if (fees.type !== 2) return;
    const block = await provider.getBlock("latest");
    expect(fees.maxFeePerGas > block!.baseFeePerGas!).to.equal(true);
    expect(fees.maxPriorityFeePerGas <= fees.maxFeePerGas).to.equal(true);
  });

  it("caps every quote at MAX_FEE_PER_GAS", async function () {
    const fees = await new FeeOracle(provider, 1000n).quote(true);
    expect(fees).to.deep.equal({ type: 2, maxFeePerGas: 1000n, maxPriorityFeePerGas: 1000n });
  });

  it("a replacement outbids the old fees by at least 12.5% (rounded up), and the quote when that is higher", async function () {
    const oracle = new FeeOracle(provider);
    const low = await oracle.bump({ type: 2, maxFeePerGas: 8n, maxPriorityFeePerGas: 8n });
    const quote = await oracle.quote(true);
    expect(low).to.deep.equal(quote.type === 2 ? { type: 2, ...pick(quote) } : null);
    const high = await oracle.bump({ type: 2, maxFeePerGas: 10n ** 15n, maxPriorityFeePerGas: 10n ** 12n + 1n });
    expect(high).to.deep.equal({
      type: 2,
      maxFeePerGas: 1125n * 10n ** 12n,
      maxPriorityFeePerGas: 1125n * 10n ** 9n + 2n,
    });
  });

  it("answers no replacement when MAX_FEE_PER_GAS leaves no room for the bump", async function () {
    const capped = new FeeOracle(provider, 10n ** 15n);
    expect(await capped.bump({ type: 2, maxFeePerGas: 10n ** 15n, maxPriorityFeePerGas: 1n })).to.equal(null);
  });
});

describe("revert decoding into API error codes (in process)", function () {
  const iface = collectionInterface();
  const revert = (data: string) => ({ code: "CALL_EXCEPTION", data, message: "execution reverted" });

  for (const [error, args, code] of [
    ["ContractPaused", [], "CONTRACT_PAUSED"],
    ["MaxSupplyExceeded", [10n, 11n], "MAX_SUPPLY_EXCEEDED"],
    ["IncorrectPayment", [2000n, 2001n], "INCORRECT_PAYMENT"],
    ["OwnableUnauthorizedAccount", ["0x70997970C51812dc3A010C7d01b50e0d17dc79C8"], "NOT_CONTRACT_OWNER"],
  ] as const) {
    it(`${error} becomes ${code}, with its values in the message`, function () {
      const fragment = iface.getError(error);
      if (!fragment) throw new Error(`${error} is not an error of the collection's ABI`);
      const apiError = toChainApiError(
        revert(iface.encodeErrorResult(fragment, args.slice(0, fragment.inputs.length))),
      );
      expect(apiError.code).to.equal(code);
      expect(apiError.message).to.contain(error);
    });
  }

  it("Error(string) from an OpenZeppelin 4 collection maps by its reason", function () {
    const data = new Interface(["error Error(string)"]).encodeErrorResult("Error", [
      "Ownable: caller is not the owner",
    ]);
    expect(toChainApiError(revert(data)).code).to.equal("NOT_CONTRACT_OWNER");
  });

  it("an empty revert is CONTRACT_REVERTED for a write and UNSUPPORTED_CONTRACT for a read", function () {
    expect(toChainApiError(revert("0x")).code).to.equal("CONTRACT_REVERTED");
    expect(toChainApiError(revert("0x"), "UNSUPPORTED_CONTRACT").code).to.equal("UNSUPPORTED_CONTRACT");
  });

  it("a refused connection is CHAIN_UNAVAILABLE; a node's funds refusal is INSUFFICIENT_FUNDS", function () {
    expect(toChainApiError({ code: "ECONNREFUSED", message: "connect ECONNREFUSED" }).code).to.equal(
      "CHAIN_UNAVAILABLE",
    );
    expect(
      toChainApiError({ code: "UNKNOWN_ERROR", message: "Sender doesn't have enough funds to send tx" }).code,
    ).to.equal("INSUFFICIENT_FUNDS");
  });
});

function pick(fees: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }) {
  return { maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas };
}
