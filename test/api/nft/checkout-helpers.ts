/** What a Checkout test needs of the chain: a test token deployed, a buyer's permit signed. */
import { readFileSync } from "node:fs";
import path from "node:path";
import { Contract, ContractFactory, type Wallet } from "ethers";
import { ROOT, type JsonBody } from "../harness";

/** Deploys a token of contracts/test from its artifact, by `wallet`. */
export async function deployToken(wallet: Wallet, name: "TestUSD" | "PlainERC20"): Promise<Contract> {
  const file = path.join(ROOT, `artifacts/contracts/test/${name}.sol/${name}.json`);
  const { abi, bytecode } = JSON.parse(readFileSync(file, "utf8")) as { abi: []; bytecode: string };
  const contract = await new ContractFactory(abi, bytecode, wallet).deploy();
  await contract.waitForDeployment();
  return contract as Contract;
}

/** The buyer's signature of a checkout's typed data (ethers derives EIP712Domain itself). */
export function signCheckout(
  signer: Wallet,
  body: JsonBody,
  message: JsonBody = body.message as JsonBody,
): Promise<string> {
  const { EIP712Domain: _domainType, ...types } = body.types as Record<string, []>;
  return signer.signTypedData(body.domain as JsonBody, types, message);
}
