// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC721A, IERC721A} from "erc721a/contracts/ERC721A.sol";
import {ERC721AQueryable} from "erc721a/contracts/extensions/ERC721AQueryable.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {ReentrancyGuard} from "@openzeppelin/contracts/utils/ReentrancyGuard.sol";

/// @title NFTCollection
/// @notice The reference ERC-721 collection that the NFT operations service acts on:
/// sequential token ids from 1, paid minting, an owner-only free mint, a whitelist,
/// a pause switch, a settable price and an owner withdrawal.
/// @dev Built on ERC721A so a batch mint writes one ownership slot instead of one per token;
/// the price and both switches share one storage slot because `mint` reads them together.
contract NFTCollection is ERC721AQueryable, Ownable, ReentrancyGuard {
    /// @notice Minting is paused.
    error ContractPaused();
    /// @notice `amount` is zero or above `maxPerTx`.
    error InvalidMintAmount(uint256 amount, uint256 maxPerTx);
    /// @notice Minting `amount` more tokens would pass the maximum supply; `remaining` are left.
    error MaxSupplyExceeded(uint256 amount, uint256 remaining);
    /// @notice The value sent is below the price of the mint.
    error InsufficientPayment(uint256 required, uint256 sent);
    /// @notice Whitelist-only mode is on and `account` is not listed.
    error NotWhitelisted(address account);
    /// @notice The contract holds no ether.
    error NothingToWithdraw();
    /// @notice The ether transfer to `to` failed.
    error WithdrawFailed(address to, uint256 amount);
    /// @notice No token with this id exists.
    error NonexistentToken(uint256 tokenId);
    /// @notice The cost does not fit the 128 bits it is stored in.
    error CostTooHigh(uint256 cost, uint256 max);
    /// @notice A maximum given to the constructor is zero.
    error InvalidConfiguration();

    /// @notice `account` was added to the whitelist.
    event WhitelistAdded(address indexed account);
    /// @notice `account` was removed from the whitelist.
    event WhitelistRemoved(address indexed account);
    /// @notice Whitelist-only minting was switched on or off.
    event WhitelistOnlyChanged(bool whitelistOnly);
    /// @notice Minting was paused or resumed.
    event PausedChanged(bool paused);
    /// @notice The price of one token changed.
    event CostChanged(uint256 previousCost, uint256 newCost);
    /// @notice `amount` wei were sent to `to`.
    event Withdrawn(address indexed to, uint256 amount);
    /// @notice The base of every token URI changed.
    event BaseURIChanged(string baseURI);

    /// @notice The largest number of tokens that will ever exist.
    uint256 public immutable maxSupply;
    /// @notice The largest number of tokens one mint call may create.
    /// @dev Bounds the cost of the first transfer of a late token of a batch (ERC721A's ownership scan).
    uint256 public immutable maxMintAmountPerTx;

    // One slot: everything `mint` checks is read with a single SLOAD.
    uint128 private _cost;
    bool private _paused;
    bool private _whitelistOnly;

    string private _baseTokenURI;
    mapping(address account => bool listed) private _whitelist;

    /// @param name_ The collection name.
    /// @param symbol_ The collection symbol.
    /// @param baseURI_ The prefix of every token URI (the id and ".json" follow it).
    /// @param cost_ The price of one token in wei.
    /// @param maxSupply_ The largest number of tokens that will ever exist.
    /// @param maxMintAmountPerTx_ The largest number of tokens one mint call may create.
    constructor(
        string memory name_,
        string memory symbol_,
        string memory baseURI_,
        uint256 cost_,
        uint256 maxSupply_,
        uint256 maxMintAmountPerTx_
    ) ERC721A(name_, symbol_) Ownable(msg.sender) {
        if (maxSupply_ == 0 || maxMintAmountPerTx_ == 0) revert InvalidConfiguration();
        if (cost_ > type(uint128).max) revert CostTooHigh(cost_, type(uint128).max);
        _baseTokenURI = baseURI_;
        _cost = uint128(cost_);
        maxSupply = maxSupply_;
        maxMintAmountPerTx = maxMintAmountPerTx_;
    }

    /// @notice Mints `amount` tokens to the caller for `cost() * amount` wei.
    /// @dev Reverts while paused, for a caller off the whitelist in whitelist-only mode,
    /// for an amount of 0 or above `maxMintAmountPerTx`, past `maxSupply`, or when underpaid.
    /// Ether above the price is kept by the contract.
    /// @param amount The number of tokens to mint.
    function mint(uint256 amount) external payable {
        uint256 price = _cost;
        if (_paused) revert ContractPaused();
        if (_whitelistOnly && !_whitelist[msg.sender]) revert NotWhitelisted(msg.sender);
        _checkMintAmount(amount);
        uint256 required = price * amount;
        if (msg.value < required) revert InsufficientPayment(required, msg.value);
        _safeMint(msg.sender, amount);
    }

    /// @notice Mints `amount` tokens to `receiver` at no cost; owner only, works while paused.
    /// @param amount The number of tokens to mint.
    /// @param receiver The address that receives them.
    function mintForFree(uint256 amount, address receiver) external onlyOwner {
        _checkMintAmount(amount);
        _safeMint(receiver, amount);
    }

    /// @notice Adds `account` to the whitelist; owner only. Adding a listed address changes nothing.
    /// @param account The address to list.
    function addUserAddressToWhitelist(address account) external onlyOwner {
        if (_whitelist[account]) return;
        _whitelist[account] = true;
        emit WhitelistAdded(account);
    }

    /// @notice Removes `account` from the whitelist; owner only. Removing an unlisted address changes nothing.
    /// @param account The address to unlist.
    function removeFromWhitelist(address account) external onlyOwner {
        if (!_whitelist[account]) return;
        _whitelist[account] = false;
        emit WhitelistRemoved(account);
    }

    /// @notice Switches whitelist-only minting on or off; owner only.
    /// @param whitelistOnly_ True to let only whitelisted addresses mint.
    function setWhitelistOnly(bool whitelistOnly_) external onlyOwner {
        if (_whitelistOnly == whitelistOnly_) return;
        _whitelistOnly = whitelistOnly_;
        emit WhitelistOnlyChanged(whitelistOnly_);
    }

    /// @notice Pauses or resumes paid minting; owner only.
    /// @param paused_ True to pause.
    function setPaused(bool paused_) external onlyOwner {
        if (_paused == paused_) return;
        _paused = paused_;
        emit PausedChanged(paused_);
    }

    /// @notice Sets the price of one token in wei; owner only.
    /// @param newCost The new price; at most 2^128 - 1.
    function setCost(uint256 newCost) external onlyOwner {
        if (newCost > type(uint128).max) revert CostTooHigh(newCost, type(uint128).max);
        uint256 previous = _cost;
        if (previous == newCost) return;
        _cost = uint128(newCost);
        emit CostChanged(previous, newCost);
    }

    /// @notice Sets the prefix of every token URI; owner only.
    /// @param baseURI_ The new prefix.
    function setBaseURI(string calldata baseURI_) external onlyOwner {
        _baseTokenURI = baseURI_;
        emit BaseURIChanged(baseURI_);
    }

    /// @notice Sends the contract's whole balance to the owner; owner only.
    /// @dev Guarded against reentrancy; the event is emitted before the transfer (checks, effects, interactions).
    function withdraw() external onlyOwner nonReentrant {
        uint256 amount = address(this).balance;
        if (amount == 0) revert NothingToWithdraw();
        address to = owner();
        emit Withdrawn(to, amount);
        (bool sent, ) = payable(to).call{value: amount}("");
        if (!sent) revert WithdrawFailed(to, amount);
    }

    /// @notice The price of one token in wei.
    /// @return The price.
    function cost() external view returns (uint256) {
        return _cost;
    }

    /// @notice Whether paid minting is paused.
    /// @return True when paused.
    function paused() external view returns (bool) {
        return _paused;
    }

    /// @notice Whether only whitelisted addresses may mint.
    /// @return True when whitelist-only mode is on.
    function whitelistOnly() external view returns (bool) {
        return _whitelistOnly;
    }

    /// @notice Whether `account` is on the whitelist.
    /// @param account The address to check.
    /// @return True when listed.
    function whitelisted(address account) external view returns (bool) {
        return _whitelist[account];
    }

    /// @notice The ids of every token `owner_` holds, in ascending order.
    /// @dev Scans all minted ids; meant for off-chain calls.
    /// @param owner_ The holder.
    /// @return The token ids.
    function walletOfOwner(address owner_) external view returns (uint256[] memory) {
        return this.tokensOfOwner(owner_);
    }

    /// @notice The URI of token `tokenId`: the base URI, the id, then ".json".
    /// @param tokenId The token.
    /// @return The URI.
    function tokenURI(uint256 tokenId) public view override(ERC721A, IERC721A) returns (string memory) {
        if (!_exists(tokenId)) revert NonexistentToken(tokenId);
        return string.concat(_baseTokenURI, _toString(tokenId), ".json");
    }

    function _checkMintAmount(uint256 amount) private view {
        if (amount == 0 || amount > maxMintAmountPerTx) revert InvalidMintAmount(amount, maxMintAmountPerTx);
        uint256 minted = _totalMinted();
        if (amount > maxSupply - minted) revert MaxSupplyExceeded(amount, maxSupply - minted);
    }

    function _startTokenId() internal pure override returns (uint256) {
        return 1;
    }
}
