import { expect } from "chai";
import { BrowserProvider, Interface, type Eip1193Provider } from "ethers";
import hre from "hardhat";
import { RevertError, toChainApiError } from "../../server/chain/chain-errors";
import { collectionInterface } from "../../server/chain/collection";
import { editionsInterface } from "../../server/chain/editions";
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

/** Hardhat's account #1: any address will do. */
const OTHER = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

describe("revert decoding into API error codes (in process)", function () {
  const iface = collectionInterface();
  const revert = (data: string) => ({ code: "CALL_EXCEPTION", data, message: "execution reverted" });

  const decode = (from: Interface, error: string, args: readonly unknown[]) => {
    const fragment = from.getError(error);
    if (!fragment) throw new Error(`${error} is not an error of this ABI`);
    return toChainApiError(revert(from.encodeErrorResult(fragment, args.slice(0, fragment.inputs.length))));
  };

  for (const [error, args, code, words] of [
    [
      "ContractPaused",
      [],
      "CONTRACT_PAUSED",
      'is paused; its owner resumes minting with POST /nft/setPaused {"state":false}',
    ],
    ["MaxSupplyExceeded", [5n, 3n], "MAX_SUPPLY_EXCEEDED", "Only 3 tokens are left; mint at most 3"],
    ["InvalidMintAmount", [11n, 10n], "INVALID_MINT_AMOUNT", "At most 10 per transaction"],
    ["IncorrectPayment", [2000n, 2001n], "INCORRECT_PAYMENT", "costs 2000 wei and 2001 wei were sent"],
    ["OwnableUnauthorizedAccount", [OTHER], "NOT_CONTRACT_OWNER", `may do this; the caller is ${OTHER}`],
  ] as const) {
    it(`${error} becomes ${code}: its values in words with the way out, the decoded error in details`, function () {
      const apiError = decode(iface, error, args);
      expect(apiError.code).to.equal(code);
      expect(apiError.message).to.contain(words);
      expect(apiError.message).to.not.contain(`${error}(`);
      expect(apiError.details).to.have.length(1);
      expect(apiError.details![0].path).to.equal("revert");
      expect(apiError.details![0].message).to.match(new RegExp(`^${error}\\(`));
    });
  }

  it("the cap and the collection, once known, complete the words: Only 3 of 100 tokens are left", function () {
    const apiError = decode(iface, "MaxSupplyExceeded", [5n, 3n]);
    expect(apiError).to.be.instanceOf(RevertError);
    const worded = (apiError as RevertError).withContext({ contract: OTHER, maxSupply: 100n });
    expect(worded.message).to.equal("Only 3 of 100 tokens are left; mint at most 3 (5 were asked)");
    expect(worded.details).to.deep.equal([{ path: "revert", message: "MaxSupplyExceeded(amount=5, remaining=3)" }]);
    const paused = (decode(iface, "ContractPaused", []) as RevertError).withContext({ contract: OTHER });
    expect(paused.message).to.match(new RegExp(`^Collection ${OTHER} is paused`));
  });

  it("every custom error of the collection's and the editions' ABIs (with what they inherit) has words", function () {
    for (const from of [iface, editionsInterface()]) {
      from.forEachError((fragment) => {
        const args = fragment.inputs.map((input) =>
          input.type === "address"
            ? OTHER
            : input.type.startsWith("bytes")
              ? "0x" + "11".repeat(32)
              : input.type === "string"
                ? "x"
                : 1n,
        );
        const apiError = decode(from, fragment.name, args);
        expect(apiError.message, fragment.name).to.not.match(/^The contract reverted with /);
        expect(apiError.message, fragment.name).to.not.contain(`${fragment.name}(`);
        expect(apiError.details?.[0]?.message, fragment.name).to.match(new RegExp(`^${fragment.name}\\(`));
      });
    }
  });

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
