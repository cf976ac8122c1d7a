// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC721} from "@openzeppelin/contracts/token/ERC721/ERC721.sol";
import {ERC721Enumerable} from "@openzeppelin/contracts/token/ERC721/extensions/ERC721Enumerable.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

/// @title EnumerableReference
/// @notice Gas baseline only: the common OpenZeppelin ERC721Enumerable collection that `_safeMint`s per token.
contract EnumerableReference is ERC721Enumerable, Ownable {
    /// @notice The value sent is below the price of the mint.
    error InsufficientPayment(uint256 required, uint256 sent);

    uint256 public cost;
    uint256 private _nextId = 1;

    /// @param cost_ The price of one token in wei.
    constructor(uint256 cost_) ERC721("Enumerable Reference", "ENUM") Ownable(msg.sender) {
        cost = cost_;
    }

    /// @notice Mints `amount` tokens to the caller for `cost * amount` wei.
    /// @param amount The number of tokens to mint.
    function mint(uint256 amount) external payable {
        if (msg.value < cost * amount) revert InsufficientPayment(cost * amount, msg.value);
        _mintMany(msg.sender, amount);
    }

    /// @notice Mints `amount` tokens to `receiver` at no cost; owner only.
    /// @param amount The number of tokens to mint.
    /// @param receiver The address that receives them.
    function mintForFree(uint256 amount, address receiver) external onlyOwner {
        _mintMany(receiver, amount);
    }

    function _mintMany(address to, uint256 amount) private {
        uint256 id = _nextId;
        for (uint256 i = 0; i < amount; ++i) {
            _safeMint(to, id + i);
        }
        _nextId = id + amount;
    }
}
