// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// @title PlainERC20
/// @notice TEST ONLY: an ERC-20 without EIP-2612 permits (no `permit`, `nonces` or `DOMAIN_SEPARATOR`), 6 decimals,
/// with an open `mint`: for the payment-token tests of a token a permit mint cannot use.
contract PlainERC20 is ERC20 {
    constructor() ERC20("Plain Token", "PLAIN") {}

    /// @notice TEST ONLY: mints `amount` to `to`; anyone may call it.
    /// @param to The account that receives the tokens.
    /// @param amount The amount, in the smallest unit.
    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }

    /// @notice 6, as TestUSD.
    /// @return The number of decimals.
    function decimals() public pure override returns (uint8) {
        return 6;
    }
}
