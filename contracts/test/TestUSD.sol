// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {ERC20Permit} from "@openzeppelin/contracts/token/ERC20/extensions/ERC20Permit.sol";

/// @title TestUSD (TUSD)
/// @notice DEV/TEST ONLY: a test stablecoin with 6 decimals and EIP-2612 permits (OpenZeppelin ERC20Permit),
/// deployed by the embedded chain of `npm start` and by the contract tests. Its `mint` is open to anyone:
/// never deploy it on a public chain, and never treat it as money.
contract TestUSD is ERC20, ERC20Permit {
    constructor() ERC20("Test USD", "TUSD") ERC20Permit("Test USD") {}

    /// @notice DEV/TEST ONLY: mints `amount` (6 decimals: 1 TUSD = 1,000,000) to `to`; anyone may call it.
    /// @param to The account that receives the tokens.
    /// @param amount The amount, in the smallest unit.
    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }

    /// @notice DEV/TEST ONLY: mints `amount` to each of `recipients` in one transaction; anyone may call it.
    /// @param recipients The accounts that receive tokens.
    /// @param amount The amount each receives, in the smallest unit.
    function mintBatch(address[] calldata recipients, uint256 amount) external {
        for (uint256 i; i < recipients.length; ++i) _mint(recipients[i], amount);
    }

    /// @notice 6, as USDC and USDT.
    /// @return The number of decimals.
    function decimals() public pure override returns (uint8) {
        return 6;
    }
}
