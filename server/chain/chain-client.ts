import {
  AbiCoder,
  concat,
  makeError,
  Interface,
  isError,
  zeroPadValue,
  type ParamType,
  type JsonRpcError,
  type JsonRpcProvider,
  type TransactionReceipt,
  type TransactionRequest,
} from "ethers";
import { ApiError, type ErrorCode } from "../http/errors";
import { collectionInterface } from "./collection";
import { toChainApiError } from "./chain-errors";
import { FeeOracle } from "./fee-oracle";
import { SignerPool, type PooledSigner } from "./signer-pool";

export interface ChainOptions {
  chainId: bigint;
  confirmations: number;
  txTimeoutMs: number;
}

export interface WriteCall {
  signer: PooledSigner;
  /** Unset for a contract creation. */
  to?: string;
  data: string;
  value?: bigint;
}

export type WriteOutcome =
  { status: "confirmed"; receipt: TransactionReceipt } | { status: "pending"; transactionHash: string; nonce: number };

/** Headroom over the estimate: a gas estimate can be just below what execution needs at its peak. */
const GAS_MARGIN_PERCENT = 20n;
const ABI = AbiCoder.defaultAbiCoder();
const CODE_RECHECK_MS = 1_000;
const ERC721_INTERFACE_ID = "0x80ac58cd";
const ERC165_INTERFACE_ID = "0x01ffc9a7";
const INVALID_INTERFACE_ID = "0xffffffff";
const TRUE_WORD = zeroPadValue("0x01", 32);
const FALSE_WORD = zeroPadValue("0x", 32);
const ERC165 = new Interface(["function supportsInterface(bytes4 interfaceId) view returns (bool)"]);

/**
 * The service's way to the chain, usable without Koa: reads against a collection, and writes
 * that are simulated first, paid for only when they will succeed, and sent through the key's
 * nonce queue.
 */
export class ChainClient {
  readonly signers: SignerPool;
  private readonly fees: FeeOracle;
  /**
   * Addresses known to hold an ERC-721 collection, with when their code was last seen. A call to
   * an address without code "succeeds", so the code is looked at again once it is older than
   * CODE_RECHECK_MS (a dev chain can be reset under a running service); the ERC-165 probe is not.
   */
  private readonly verified = new Map<string, number>();
  private nextRpcId = 1;
  private readonly views = new Map<
    string,
    { selector: string; inputs: readonly ParamType[]; outputs: readonly ParamType[] }
  >();

  constructor(
    readonly provider: JsonRpcProvider,
    readonly options: ChainOptions,
  ) {
    this.signers = new SignerPool(provider);
    this.fees = new FeeOracle(provider);
  }

  /** 404 CONTRACT_NOT_FOUND without code, 422 UNSUPPORTED_CONTRACT for code that is no ERC-721. */
  async ensureCollection(address: string): Promise<void> {
    const checkedAt = this.verified.get(address);
    if (checkedAt !== undefined && Date.now() - checkedAt < CODE_RECHECK_MS) return;
    const code = await this.provider.getCode(address).catch((err) => {
      throw toChainApiError(err);
    });
    if (code === "0x") {
      this.verified.delete(address);
      throw new ApiError("CONTRACT_NOT_FOUND", `No contract at ${address}`);
    }
    if (checkedAt === undefined && !(await this.answersErc165(address, ERC721_INTERFACE_ID)))
      throw unsupported(address);
    this.verified.set(address, Date.now());
  }

  /**
   * The ERC-165 detection procedure, with exact answers: code that returns any non-zero word to
   * every call must not pass for a collection.
   */
  private async answersErc165(address: string, interfaceId: string): Promise<boolean> {
    const ask = (id: string) =>
      this.provider
        .call({ to: address, data: ERC165.encodeFunctionData("supportsInterface", [id]) })
        .catch((err: unknown) => {
          const apiError = toChainApiError(err);
          if (apiError.code === "CHAIN_UNAVAILABLE") throw apiError;
          return "error";
        });
    const [erc165, invalid, wanted] = await Promise.all([
      ask(ERC165_INTERFACE_ID),
      ask(INVALID_INTERFACE_ID),
      ask(interfaceId),
    ]);
    return erc165 === TRUE_WORD && invalid === FALSE_WORD && wanted === TRUE_WORD;
  }

  /**
   * One view call of the collection ABI, straight over JSON-RPC: the read path skips the Contract
   * wrapper's argument resolution and transaction population, which cost more than the call.
   */
  async view<T>(address: string, method: string, args: readonly unknown[] = []): Promise<T> {
    let view = this.views.get(method);
    if (!view) {
      const fragment = collectionInterface().getFunction(method)!;
      // ethers recomputes a fragment's selector (a keccak hash) on every encode; compute it once.
      view = { selector: fragment.selector, inputs: fragment.inputs, outputs: fragment.outputs };
      this.views.set(method, view);
    }
    const data = concat([view.selector, ABI.encode(view.inputs, args)]);
    const result = await this.ethCall(address, data);
    if (result === "0x") throw makeError("could not decode result data", "BAD_DATA", { value: result });
    return ABI.decode(view.outputs, result)[0] as T;
  }

  /**
   * eth_call through the provider's transport directly: `send` would queue each call behind a
   * drain timer meant for batching, which is off here.
   */
  private async ethCall(to: string, data: string): Promise<string> {
    const payload = {
      method: "eth_call",
      params: [{ to, data }, "latest"],
      id: this.nextRpcId++,
      jsonrpc: "2.0" as const,
    };
    const [response] = await this.provider._send(payload);
    if ("error" in response) throw this.provider.getRpcError(payload, response as JsonRpcError);
    return response.result as string;
  }

  /** Runs reads against a verified collection and maps their failures to API errors. */
  async read<T>(address: string, reads: () => Promise<T>): Promise<T> {
    await this.ensureCollection(address);
    try {
      return await reads();
    } catch (err) {
      throw await this.explain(address, err, "UNSUPPORTED_CONTRACT");
    }
  }

  /**
   * Simulates `call`, sends it through the caller's nonce queue (a node refusing a sender that
   * cannot pay makes it 402) and
   * waits for CONFIRMATIONS blocks; past TX_TIMEOUT_MS (or if the chain drops after the send) the
   * transaction is reported pending with its hash, never lost.
   */
  async write(call: WriteCall): Promise<WriteOutcome> {
    const { signer, to, data, value = 0n } = call;
    const from = signer.address;
    if (to) await this.ensureCollection(to);
    let gasEstimate: bigint;
    let feeFields: TransactionRequest;
    try {
      [gasEstimate, feeFields] = await Promise.all([
        this.provider.estimateGas({ from, to, data, value }),
        this.fees.feeFields(),
      ]);
    } catch (err) {
      throw to ? await this.explain(to, err, "CONTRACT_REVERTED") : toChainApiError(err);
    }
    const gasLimit = gasEstimate + (gasEstimate * GAS_MARGIN_PERCENT) / 100n;

    let transactionHash: string;
    let nonce: number;
    try {
      const sent = await signer.queue.send({ to, data, value, gasLimit, chainId: this.options.chainId, ...feeFields });
      ({ hash: transactionHash, nonce } = sent);
    } catch (err) {
      throw toChainApiError(err);
    }

    let receipt: TransactionReceipt | null;
    try {
      // An automining chain has the receipt already; ask for it before waiting on blocks.
      receipt = await this.provider.getTransactionReceipt(transactionHash);
      const confirmed =
        receipt && (this.options.confirmations === 1 || (await receipt.confirmations()) >= this.options.confirmations);
      if (!confirmed) {
        receipt = await this.provider.waitForTransaction(
          transactionHash,
          this.options.confirmations,
          this.options.txTimeoutMs,
        );
      }
    } catch {
      return { status: "pending", transactionHash, nonce };
    }
    if (!receipt) return { status: "pending", transactionHash, nonce };
    if (receipt.status !== 1) {
      throw new ApiError(
        "CONTRACT_REVERTED",
        `Transaction ${transactionHash} reverted on chain after a successful simulation`,
      );
    }
    return { status: "confirmed", receipt };
  }

  async ping(): Promise<number> {
    try {
      return await this.provider.getBlockNumber();
    } catch (err) {
      throw toChainApiError(err);
    }
  }

  /** Maps a failed call; an empty answer re-checks the address, which may have lost its code (a reset chain). */
  private async explain(address: string, err: unknown, emptyRevert: ErrorCode): Promise<ApiError> {
    const apiError = toChainApiError(err, emptyRevert);
    if (apiError.code === "UNSUPPORTED_CONTRACT" || isError(err, "BAD_DATA")) {
      this.verified.delete(address);
      try {
        await this.ensureCollection(address);
      } catch (recheck) {
        return toChainApiError(recheck);
      }
    }
    return apiError;
  }
}

function unsupported(address: string): ApiError {
  return new ApiError(
    "UNSUPPORTED_CONTRACT",
    `The code at ${address} is not an ERC-721 collection this service can drive`,
  );
}
