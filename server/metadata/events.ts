import { id } from "ethers";

/** The reference contract's Revealed(uint256 startingIndex). */
export const REVEALED_TOPIC = id("Revealed(uint256)");
