// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC1155} from "@openzeppelin/contracts/token/ERC1155/ERC1155.sol";
import {ERC1155Supply} from "@openzeppelin/contracts/token/ERC1155/extensions/ERC1155Supply.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

/// @title ERC1155SupplyReference
/// @notice Gas baseline only: a plain OpenZeppelin ERC1155Supply with a paid mint of any id and an owner airdrop.
contract ERC1155SupplyReference is ERC1155Supply, Ownable {
    /// @notice The value sent is below the price of the mint.
    error InsufficientPayment(uint256 required, uint256 sent);

    uint256 public cost;

    /// @param cost_ The price of one token in wei, for every id.
    constructor(uint256 cost_) ERC1155("ipfs://reference/{id}.json") Ownable(msg.sender) {
        cost = cost_;
    }

    /// @notice Mints `amount` tokens of `id` to the caller for `cost * amount` wei.
    /// @param id The token id.
    /// @param amount The number of tokens to mint.
    function mint(uint256 id, uint256 amount) external payable {
        if (msg.value < cost * amount) revert InsufficientPayment(cost * amount, msg.value);
        _mint(msg.sender, id, amount, "");
    }

    /// @notice Mints `amounts[i]` tokens of `id` to each `recipients[i]`; owner only.
    /// @param id The token id.
    /// @param recipients The addresses that receive tokens.
    /// @param amounts The number of tokens each receives.
    function airdrop(uint256 id, address[] calldata recipients, uint256[] calldata amounts) external onlyOwner {
        for (uint256 i; i < recipients.length; ++i) {
            _mint(recipients[i], id, amounts[i], "");
        }
    }
}
