// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {ERC721} from "@openzeppelin/contracts/token/ERC721/ERC721.sol";

/// @title A plain OpenZeppelin ERC-721 for tests
/// @notice No enumeration, no totalSupply, no walletOfOwner: what the index must read from logs alone.
contract PlainERC721 is ERC721 {
    constructor() ERC721("Plain", "PLN") {}

    /// @notice Mints `tokenId` to `to`; anyone may (a test double).
    /// @param to The receiver.
    /// @param tokenId The id to mint.
    function mint(address to, uint256 tokenId) external {
        _mint(to, tokenId);
    }

    /// @notice Burns `tokenId`; its owner or an approved address only.
    /// @param tokenId The id to burn.
    function burn(uint256 tokenId) external {
        _update(address(0), tokenId, _msgSender());
    }
}
