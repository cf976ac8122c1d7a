import { id } from "ethers";

/** The reference contract's Revealed(uint256 startingIndex). */
export const REVEALED_TOPIC = id("Revealed(uint256)");

/** The reference contract's RevealBlockReset(uint256 previousBlock, uint256 revealBlock). */
export const REVEAL_BLOCK_RESET_TOPIC = id("RevealBlockReset(uint256,uint256)");
