// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC721A} from "erc721a/contracts/ERC721A.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

/// @title ERC721AReference
/// @notice Gas baseline only: a plain ERC721A collection with a paid batch mint.
contract ERC721AReference is ERC721A, Ownable {
    /// @notice The value sent is below the price of the mint.
    error InsufficientPayment(uint256 required, uint256 sent);

    uint256 public cost;

    /// @param cost_ The price of one token in wei.
    constructor(uint256 cost_) ERC721A("ERC721A Reference", "AREF") Ownable(msg.sender) {
        cost = cost_;
    }

    /// @notice Mints `amount` tokens to the caller for `cost * amount` wei.
    /// @param amount The number of tokens to mint.
    function mint(uint256 amount) external payable {
        if (msg.value < cost * amount) revert InsufficientPayment(cost * amount, msg.value);
        _safeMint(msg.sender, amount);
    }

    /// @notice Mints `amount` tokens to `receiver` at no cost; owner only.
    /// @param amount The number of tokens to mint.
    /// @param receiver The address that receives them.
    function mintForFree(uint256 amount, address receiver) external onlyOwner {
        _safeMint(receiver, amount);
    }

    function _startTokenId() internal pure override returns (uint256) {
        return 1;
    }
}
