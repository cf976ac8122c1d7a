/**
 * Makes (or finds) a secp256k1 key inside a PKCS#11 token and prints its Ethereum address, with the
 * same settings the service reads: PKCS11_MODULE, PKCS11_TOKEN_LABEL, PKCS11_PIN.
 * Usage: node -r ts-node/register/transpile-only scripts/pkcs11-key.ts generate|show KEY_LABEL
 */
import { Pkcs11SignerError, Pkcs11Token } from "../server/signers/pkcs11";

async function main(): Promise<void> {
  const [command, keyLabel] = process.argv.slice(2);
  const { PKCS11_MODULE, PKCS11_TOKEN_LABEL, PKCS11_PIN } = process.env;
  if (
    (command !== "generate" && command !== "show") ||
    !keyLabel ||
    !PKCS11_MODULE ||
    !PKCS11_TOKEN_LABEL ||
    !PKCS11_PIN
  ) {
    throw new Error(
      "usage: PKCS11_MODULE=… PKCS11_TOKEN_LABEL=… PKCS11_PIN=… node -r ts-node/register/transpile-only scripts/pkcs11-key.ts generate|show KEY_LABEL",
    );
  }
  const token = await Pkcs11Token.open({ modulePath: PKCS11_MODULE, tokenLabel: PKCS11_TOKEN_LABEL, pin: PKCS11_PIN });
  try {
    const key = command === "generate" ? await token.generateKey(keyLabel) : await token.findKey(keyLabel);
    console.log(`${key.label}  ${key.address}  (sensitive: ${key.sensitive}, extractable: ${key.extractable})`);
  } finally {
    await token.close();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Pkcs11SignerError || err instanceof Error ? err.message : String(err));
  process.exitCode = 1;
});
