// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// @title FalseReturningERC20
/// @notice TEST ONLY: an ERC-20 whose `transfer` and `transferFrom` return false, moving nothing, while
/// `failing` is on (as some old tokens do instead of reverting): the payment-token tests use it to prove the
/// contracts go through SafeERC20 and revert instead of minting for nothing.
contract FalseReturningERC20 is ERC20 {
    /// @notice Whether transfers return false instead of moving tokens.
    bool public failing = true;

    constructor() ERC20("False Token", "FALSE") {}

    /// @notice TEST ONLY: mints `amount` to `to`; anyone may call it.
    /// @param to The account that receives the tokens.
    /// @param amount The amount, in the smallest unit.
    function mint(address to, uint256 amount) external {
        _mint(to, amount);
    }

    /// @notice TEST ONLY: switches the false-returning transfers on or off.
    /// @param failing_ True to make transfers return false.
    function setFailing(bool failing_) external {
        failing = failing_;
    }

    /// @notice Returns false and moves nothing while `failing`; else ERC20's transfer.
    /// @param to The recipient.
    /// @param value The amount.
    /// @return Whether the transfer happened.
    function transfer(address to, uint256 value) public override returns (bool) {
        if (failing) return false;
        return super.transfer(to, value);
    }

    /// @notice Returns false and moves nothing while `failing`; else ERC20's transferFrom.
    /// @param from The holder.
    /// @param to The recipient.
    /// @param value The amount.
    /// @return Whether the transfer happened.
    function transferFrom(address from, address to, uint256 value) public override returns (bool) {
        if (failing) return false;
        return super.transferFrom(from, to, value);
    }
}
