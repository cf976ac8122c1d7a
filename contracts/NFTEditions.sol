// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC1155} from "@openzeppelin/contracts/token/ERC1155/ERC1155.sol";
import {ERC1155Supply} from "@openzeppelin/contracts/token/ERC1155/extensions/ERC1155Supply.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {ReentrancyGuard} from "@openzeppelin/contracts/utils/ReentrancyGuard.sol";
import {ERC2981} from "@openzeppelin/contracts/token/common/ERC2981.sol";
import {IERC4906} from "@openzeppelin/contracts/interfaces/IERC4906.sol";
import {Strings} from "@openzeppelin/contracts/utils/Strings.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
// The payment errors are declared there, at file level, and imported by name so that they are this contract's.
import {TokenPayment, NativePaymentNotAccepted, NotTokenPriced, InvalidPaymentToken} from "./utils/TokenPayment.sol";

/// @title NFTEditions
/// @notice The reference ERC-1155 editions contract that the NFT operations service acts on: each
/// token id, from 1 in order, is an edition with its own price, cap (0 = an open edition), per-transaction
/// cap and pause; the contract has the ERC-721 collection's whitelist, a pause of its own, an owner-only
/// free mint, airdrops, an owner withdrawal and ERC-2981 royalties. Prices are in the native coin, or in an
/// ERC-20 payment token, with EIP-2612 permit mints that anyone may send for the buyer.
/// @dev Built on OpenZeppelin's ERC1155Supply. An edition's four settings share one storage slot because
/// `mint` reads them together; the contract's pause, whitelist switch and payment token share another.
/// An edition exists when its `maxMintAmountPerTx` is non-zero, which `createEdition` requires, so that
/// `mint` needs no read of the edition count.
contract NFTEditions is ERC1155Supply, Ownable, ReentrancyGuard, ERC2981 {
    /// @notice One edition's settings, packed in one slot.
    struct Edition {
        uint128 cost;
        uint64 maxSupply;
        uint32 maxMintAmountPerTx;
        bool paused;
    }

    /// @notice Minting is paused on the whole contract.
    error ContractPaused();
    /// @notice Minting of edition `tokenId` is paused.
    error EditionPaused(uint256 tokenId);
    /// @notice `amount` is zero or above the edition's `maxPerTx`.
    error InvalidMintAmount(uint256 amount, uint256 maxPerTx);
    /// @notice Minting `amount` more of an edition would pass its maximum supply; `remaining` are left.
    error MaxSupplyExceeded(uint256 amount, uint256 remaining);
    /// @notice The value sent is below the price of the mint.
    error InsufficientPayment(uint256 required, uint256 sent);
    /// @notice Whitelist-only mode is on and `account` is not listed.
    error NotWhitelisted(address account);
    /// @notice The contract holds no ether.
    error NothingToWithdraw();
    /// @notice The ether transfer to `to` failed.
    error WithdrawFailed(address to, uint256 amount);
    /// @notice No edition with this token id exists.
    error NonexistentToken(uint256 tokenId);
    /// @notice The cost does not fit the 128 bits it is stored in.
    error CostTooHigh(uint256 cost, uint256 max);
    /// @notice A new edition's `maxMintAmountPerTx` is zero or above 2^32 - 1, or its `maxSupply` above 2^64 - 1.
    error InvalidEdition(uint256 maxSupply, uint256 maxMintAmountPerTx);
    /// @notice An airdrop's lists of recipients and amounts differ in length, or are empty.
    error InvalidAirdrop(uint256 recipients, uint256 amounts);
    /// @notice `refreshMetadata` needs `fromTokenId <= toTokenId`.
    error InvalidTokenRange(uint256 fromTokenId, uint256 toTokenId);

    /// @notice Edition `tokenId` was created with its price, cap (0 = open) and per-transaction cap.
    event EditionCreated(uint256 indexed tokenId, uint256 cost, uint256 maxSupply, uint256 maxMintAmountPerTx);
    /// @notice `account` was added to the whitelist.
    event WhitelistAdded(address indexed account);
    /// @notice `account` was removed from the whitelist.
    event WhitelistRemoved(address indexed account);
    /// @notice Whitelist-only minting was switched on or off.
    event WhitelistOnlyChanged(bool whitelistOnly);
    /// @notice Minting on the whole contract was paused or resumed.
    event PausedChanged(bool paused);
    /// @notice Minting of edition `tokenId` was paused or resumed.
    event EditionPausedChanged(uint256 indexed tokenId, bool paused);
    /// @notice The price of one token of edition `tokenId` changed.
    event CostChanged(uint256 indexed tokenId, uint256 previousCost, uint256 newCost);
    /// @notice `amount` wei were sent to `to`.
    event Withdrawn(address indexed to, uint256 amount);
    /// @notice The base of every token URI changed.
    event BaseURIChanged(string baseURI);
    /// @notice The royalty of every token changed (ERC-2981): `bps` hundredths of a percent to `receiver`.
    event DefaultRoyaltyChanged(address indexed receiver, uint96 bps);
    /// @notice The payment token changed (zero: the native coin); prices are in its smallest unit from now on.
    event PaymentTokenChanged(address indexed previousToken, address indexed token);
    /// @notice `amount` of the payment token `token` were sent to `to`.
    event PaymentTokenWithdrawn(address indexed to, address indexed token, uint256 amount);

    /// @dev ERC-4906's interface id (the EIP fixes it; IERC4906 declares no function of its own).
    bytes4 private constant ERC4906_INTERFACE_ID = bytes4(0x49064906);

    mapping(uint256 tokenId => Edition edition) private _editions;

    // One slot: both switches `mint` checks, the count `createEdition` bumps, and the payment token
    // (zero: the native coin), which `mint` reads with the switches.
    bool private _paused;
    bool private _whitelistOnly;
    uint64 private _editionCount;
    address private _paymentToken;

    string private _name;
    string private _symbol;
    string private _baseTokenURI;
    mapping(address account => bool listed) private _whitelist;

    /// @param name_ The contract's name, for marketplaces.
    /// @param symbol_ The contract's symbol, for marketplaces.
    /// @param baseURI_ The prefix of every token URI (the id and ".json" follow it).
    /// @param royaltyReceiver The address royalties are paid to; zero for no royalty.
    /// @param royaltyBps The royalty in hundredths of a percent of the sale price.
    /// @param paymentToken_ The ERC-20 every edition's price is in, a contract; zero for the native coin.
    constructor(
        string memory name_,
        string memory symbol_,
        string memory baseURI_,
        address royaltyReceiver,
        uint96 royaltyBps,
        address paymentToken_
    ) ERC1155("") Ownable(msg.sender) {
        _name = name_;
        _symbol = symbol_;
        _baseTokenURI = baseURI_;
        if (royaltyReceiver != address(0)) {
            _setDefaultRoyalty(royaltyReceiver, royaltyBps);
            emit DefaultRoyaltyChanged(royaltyReceiver, royaltyBps);
        }
        if (paymentToken_ != address(0)) _setPaymentToken(paymentToken_);
    }

    /// @notice Creates the next edition (ids from 1, in order); owner only. Emits `EditionCreated` and,
    /// as ERC-1155 advises to announce an id with no balance yet, a `TransferSingle` of 0 from and to zero.
    /// @param cost_ The price of one token in wei; at most 2^128 - 1.
    /// @param maxSupply_ The largest number of tokens of the edition that will ever exist; 0 for an open edition.
    /// @param maxMintAmountPerTx_ The largest number of tokens one mint call may create; 1 to 2^32 - 1.
    /// @return tokenId The new edition's token id.
    function createEdition(
        uint256 cost_,
        uint256 maxSupply_,
        uint256 maxMintAmountPerTx_
    ) external onlyOwner returns (uint256 tokenId) {
        if (cost_ > type(uint128).max) revert CostTooHigh(cost_, type(uint128).max);
        if (maxMintAmountPerTx_ == 0 || maxMintAmountPerTx_ > type(uint32).max || maxSupply_ > type(uint64).max) {
            revert InvalidEdition(maxSupply_, maxMintAmountPerTx_);
        }
        tokenId = ++_editionCount;
        _editions[tokenId] = Edition({
            cost: uint128(cost_),
            maxSupply: uint64(maxSupply_),
            maxMintAmountPerTx: uint32(maxMintAmountPerTx_),
            paused: false
        });
        emit EditionCreated(tokenId, cost_, maxSupply_, maxMintAmountPerTx_);
        emit TransferSingle(msg.sender, address(0), address(0), tokenId, 0);
    }

    /// @notice Mints `amount` tokens of edition `tokenId` to the caller for `cost(tokenId) * amount` wei, or,
    /// when a payment token is set, for that much of the token, taken from the caller (who must have approved
    /// this contract).
    /// @dev Reverts for an edition that does not exist, while the contract or the edition is paused, for a
    /// caller off the whitelist in whitelist-only mode, for an amount of 0 or above the edition's
    /// `maxMintAmountPerTx`, past its `maxSupply`, or when underpaid. Ether above the price is kept.
    /// With a payment token, any ether sent reverts (`NativePaymentNotAccepted`), and the token is pulled after
    /// the mint (the last interaction).
    /// @param tokenId The edition.
    /// @param amount The number of tokens to mint.
    function mint(uint256 tokenId, uint256 amount) external payable {
        Edition storage e = _editions[tokenId];
        // One SLOAD each: the optimizer reads the four packed fields of the edition together, and the
        // switches with the payment token.
        (uint256 price, uint256 max, uint256 maxPerTx, bool editionPaused_) = (
            e.cost,
            e.maxSupply,
            e.maxMintAmountPerTx,
            e.paused
        );
        (bool paused_, bool whitelistOnly_, address token) = (_paused, _whitelistOnly, _paymentToken);
        if (maxPerTx == 0) revert NonexistentToken(tokenId);
        if (paused_) revert ContractPaused();
        if (editionPaused_) revert EditionPaused(tokenId);
        if (whitelistOnly_ && !_whitelist[msg.sender]) revert NotWhitelisted(msg.sender);
        _checkMintAmount(tokenId, max, maxPerTx, amount);
        uint256 required;
        // A 128-bit price times an amount of at most 2^32 - 1 (checked above) cannot overflow.
        unchecked {
            required = price * amount;
        }
        if (token != address(0)) {
            if (msg.value != 0) revert NativePaymentNotAccepted();
            _mint(msg.sender, tokenId, amount, "");
            TokenPayment.pull(token, msg.sender, required);
            return;
        }
        if (msg.value < required) revert InsufficientPayment(required, msg.value);
        _mint(msg.sender, tokenId, amount, "");
    }

    /// @notice Mints `amount` tokens of edition `tokenId` to `buyer` for `cost(tokenId) * amount` of the payment
    /// token, taken from `buyer` with `buyer`'s EIP-2612 permit of exactly that price to this contract. Anyone
    /// may send it: the sender pays the gas, never the price.
    /// @dev The whitelist (of `buyer`), both pauses and the edition's caps apply as for `mint`. A permit someone
    /// else already applied does not block the mint (see `TokenPayment.permit`). Reverts with `NotTokenPriced`
    /// when prices are in the native coin.
    /// @param buyer The account that signed the permit, pays and receives the tokens.
    /// @param amount The number of tokens to mint.
    /// @param tokenId The edition.
    /// @param deadline The permit's deadline (unix seconds).
    /// @param v The permit signature's v.
    /// @param r The permit signature's r.
    /// @param s The permit signature's s.
    function mintWithPermit(
        address buyer,
        uint256 amount,
        uint256 tokenId,
        uint256 deadline,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external nonReentrant {
        address token = _paymentToken;
        if (token == address(0)) revert NotTokenPriced();
        uint256 required = _checkMint(tokenId, amount, buyer);
        TokenPayment.permit(token, buyer, required, deadline, v, r, s);
        _mint(buyer, tokenId, amount, "");
        TokenPayment.pull(token, buyer, required);
    }

    /// @notice Sets the ERC-20 token every edition's price is in (in its smallest unit); zero for the native
    /// coin. Owner only.
    /// @dev Prices are not converted: set each edition's `cost` in the new unit too. `withdraw` sends the
    /// balance of the current payment token only, so withdraw before changing it.
    /// @param token The payment token, a contract; or zero.
    function setPaymentToken(address token) external onlyOwner {
        _setPaymentToken(token);
    }

    /// @notice The ERC-20 token prices are in; zero when they are in the native coin (wei).
    /// @return The payment token.
    function paymentToken() external view returns (address) {
        return _paymentToken;
    }

    /// @dev `setPaymentToken` without the owner check, for the constructor too: refuses an address without
    /// code, does nothing for the current token, else sets it and emits `PaymentTokenChanged`.
    /// @param token The payment token, a contract; or zero.
    function _setPaymentToken(address token) internal {
        if (token != address(0) && token.code.length == 0) revert InvalidPaymentToken(token);
        address previous = _paymentToken;
        if (previous == token) return;
        _paymentToken = token;
        emit PaymentTokenChanged(previous, token);
    }

    /// @notice Mints `amount` tokens of edition `tokenId` to `receiver` at no cost; owner only, works while
    /// the contract or the edition is paused and for a receiver off the whitelist.
    /// @param tokenId The edition.
    /// @param amount The number of tokens to mint.
    /// @param receiver The address that receives them.
    function mintForFree(uint256 tokenId, uint256 amount, address receiver) external onlyOwner {
        Edition memory e = _existingEdition(tokenId);
        _checkMintAmount(tokenId, e.maxSupply, e.maxMintAmountPerTx, amount);
        _mint(receiver, tokenId, amount, "");
    }

    /// @notice Mints `amounts[i]` tokens of edition `tokenId` to each `recipients[i]` in one transaction;
    /// owner only, works while paused.
    /// @dev Keeps the edition's `maxSupply`, not its `maxMintAmountPerTx` (the owner's batch). Each recipient
    /// gets a `TransferSingle`; a contract recipient must accept ERC-1155 tokens, or the whole airdrop reverts.
    /// @param tokenId The edition.
    /// @param recipients The addresses that receive tokens.
    /// @param amounts The number of tokens each receives (each at least 1).
    function airdrop(uint256 tokenId, address[] calldata recipients, uint256[] calldata amounts) external onlyOwner {
        Edition memory e = _existingEdition(tokenId);
        uint256 count = recipients.length;
        if (count == 0 || count != amounts.length) revert InvalidAirdrop(count, amounts.length);
        uint256 total;
        for (uint256 i; i < count; ++i) {
            uint256 amount = amounts[i];
            if (amount == 0) revert InvalidMintAmount(0, e.maxMintAmountPerTx);
            total += amount;
        }
        if (e.maxSupply != 0) {
            uint256 remaining = e.maxSupply - totalSupply(tokenId);
            if (total > remaining) revert MaxSupplyExceeded(total, remaining);
        }
        for (uint256 i; i < count; ++i) {
            _mint(recipients[i], tokenId, amounts[i], "");
        }
    }

    /// @notice Sets the price of one token of edition `tokenId` in wei; owner only.
    /// @param tokenId The edition.
    /// @param newCost The new price; at most 2^128 - 1.
    function setCost(uint256 tokenId, uint256 newCost) external onlyOwner {
        Edition storage e = _editionStorage(tokenId);
        if (newCost > type(uint128).max) revert CostTooHigh(newCost, type(uint128).max);
        uint256 previous = e.cost;
        if (previous == newCost) return;
        e.cost = uint128(newCost);
        emit CostChanged(tokenId, previous, newCost);
    }

    /// @notice Pauses or resumes paid minting of every edition; owner only.
    /// @param paused_ True to pause.
    function setPaused(bool paused_) external onlyOwner {
        if (_paused == paused_) return;
        _paused = paused_;
        emit PausedChanged(paused_);
    }

    /// @notice Pauses or resumes paid minting of edition `tokenId`; owner only.
    /// @param tokenId The edition.
    /// @param paused_ True to pause.
    function setEditionPaused(uint256 tokenId, bool paused_) external onlyOwner {
        Edition storage e = _editionStorage(tokenId);
        if (e.paused == paused_) return;
        e.paused = paused_;
        emit EditionPausedChanged(tokenId, paused_);
    }

    /// @notice Adds `account` to the whitelist; owner only. Adding a listed address changes nothing.
    /// @param account The address to list.
    function addUserAddressToWhitelist(address account) external onlyOwner {
        if (_whitelist[account]) return;
        _whitelist[account] = true;
        emit WhitelistAdded(account);
    }

    /// @notice Adds every address of `accounts` to the whitelist; owner only. Listed ones change nothing.
    /// @param accounts The addresses to list.
    function addToWhitelist(address[] calldata accounts) external onlyOwner {
        for (uint256 i; i < accounts.length; ++i) {
            address account = accounts[i];
            if (_whitelist[account]) continue;
            _whitelist[account] = true;
            emit WhitelistAdded(account);
        }
    }

    /// @notice Removes `account` from the whitelist; owner only. Removing an unlisted address changes nothing.
    /// @param account The address to unlist.
    function removeFromWhitelist(address account) external onlyOwner {
        if (!_whitelist[account]) return;
        _whitelist[account] = false;
        emit WhitelistRemoved(account);
    }

    /// @notice Switches whitelist-only minting on or off, for every edition; owner only.
    /// @param whitelistOnly_ True to let only whitelisted addresses mint.
    function setWhitelistOnly(bool whitelistOnly_) external onlyOwner {
        if (_whitelistOnly == whitelistOnly_) return;
        _whitelistOnly = whitelistOnly_;
        emit WhitelistOnlyChanged(whitelistOnly_);
    }

    /// @notice Sets the prefix of every token URI; owner only. Emits ERC-4906's `BatchMetadataUpdate`
    /// over every token id, so marketplaces read the metadata again.
    /// @param baseURI_ The new prefix.
    function setBaseURI(string calldata baseURI_) external onlyOwner {
        _baseTokenURI = baseURI_;
        emit BaseURIChanged(baseURI_);
        emit IERC4906.BatchMetadataUpdate(1, type(uint256).max);
    }

    /// @notice Asks marketplaces to read the metadata of token ids `fromTokenId` to `toTokenId` again
    /// (ERC-4906); owner only.
    /// @param fromTokenId The first token id.
    /// @param toTokenId The last token id (inclusive).
    function refreshMetadata(uint256 fromTokenId, uint256 toTokenId) external onlyOwner {
        if (fromTokenId > toTokenId) revert InvalidTokenRange(fromTokenId, toTokenId);
        if (fromTokenId == toTokenId) emit IERC4906.MetadataUpdate(fromTokenId);
        else emit IERC4906.BatchMetadataUpdate(fromTokenId, toTokenId);
    }

    /// @notice Sets the royalty of every token (ERC-2981); owner only.
    /// @param receiver The address royalties are paid to.
    /// @param bps The royalty in hundredths of a percent of the sale price (at most 10,000).
    function setDefaultRoyalty(address receiver, uint96 bps) external onlyOwner {
        _setDefaultRoyalty(receiver, bps);
        emit DefaultRoyaltyChanged(receiver, bps);
    }

    /// @notice Sends the contract's whole balance to the owner, and its whole balance of the payment token
    /// when one is set; owner only.
    /// @dev Guarded against reentrancy; each event is emitted before its transfer (checks, effects, interactions).
    /// Reverts with `NothingToWithdraw` only when both balances are zero; `Withdrawn` is emitted when ether is sent.
    function withdraw() external onlyOwner nonReentrant {
        uint256 amount = address(this).balance;
        address token = _paymentToken;
        uint256 tokenAmount = token == address(0) ? 0 : IERC20(token).balanceOf(address(this));
        if (amount == 0 && tokenAmount == 0) revert NothingToWithdraw();
        address to = owner();
        if (tokenAmount != 0) {
            emit PaymentTokenWithdrawn(to, token, tokenAmount);
            SafeERC20.safeTransfer(IERC20(token), to, tokenAmount);
        }
        if (amount == 0) return;
        emit Withdrawn(to, amount);
        (bool sent, ) = payable(to).call{value: amount}("");
        if (!sent) revert WithdrawFailed(to, amount);
    }

    /// @notice The contract's name, for marketplaces.
    /// @return The name.
    function name() external view returns (string memory) {
        return _name;
    }

    /// @notice The contract's symbol, for marketplaces.
    /// @return The symbol.
    function symbol() external view returns (string memory) {
        return _symbol;
    }

    /// @notice How many editions exist: their token ids are 1 to this count.
    /// @return The count.
    function editionCount() external view returns (uint256) {
        return _editionCount;
    }

    /// @notice Everything about edition `tokenId` in one call; reverts with `NonexistentToken` when there is none.
    /// @param tokenId The edition.
    /// @return cost_ The price of one token in wei.
    /// @return maxSupply_ The cap; 0 for an open edition.
    /// @return maxMintAmountPerTx_ The largest number of tokens one mint call may create.
    /// @return paused_ Whether minting of this edition is paused (the contract's own pause aside).
    /// @return supply The number of its tokens minted so far.
    function edition(
        uint256 tokenId
    )
        external
        view
        returns (uint256 cost_, uint256 maxSupply_, uint256 maxMintAmountPerTx_, bool paused_, uint256 supply)
    {
        Edition memory e = _existingEdition(tokenId);
        return (e.cost, e.maxSupply, e.maxMintAmountPerTx, e.paused, totalSupply(tokenId));
    }

    /// @notice The price of one token of edition `tokenId` in wei, or in the payment token's smallest unit when
    /// one is set.
    /// @param tokenId The edition.
    /// @return The price.
    function cost(uint256 tokenId) external view returns (uint256) {
        return _existingEdition(tokenId).cost;
    }

    /// @notice The largest number of tokens of edition `tokenId` that will ever exist; 0 for an open edition.
    /// @param tokenId The edition.
    /// @return The cap.
    function maxSupply(uint256 tokenId) external view returns (uint256) {
        return _existingEdition(tokenId).maxSupply;
    }

    /// @notice The largest number of tokens of edition `tokenId` one mint call may create.
    /// @param tokenId The edition.
    /// @return The per-transaction cap.
    function maxMintAmountPerTx(uint256 tokenId) external view returns (uint256) {
        return _existingEdition(tokenId).maxMintAmountPerTx;
    }

    /// @notice Whether paid minting of edition `tokenId` is paused by its own switch (see also `paused`).
    /// @param tokenId The edition.
    /// @return True when paused.
    function editionPaused(uint256 tokenId) external view returns (bool) {
        return _existingEdition(tokenId).paused;
    }

    /// @notice Whether paid minting of every edition is paused.
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

    /// @notice The URI of edition `tokenId`'s metadata: the base URI, the id in decimal, then ".json".
    /// @param tokenId The edition.
    /// @return The URI.
    function uri(uint256 tokenId) public view override returns (string memory) {
        _existingEdition(tokenId);
        return string.concat(_baseTokenURI, Strings.toString(tokenId), ".json");
    }

    /// @notice Whether the contract implements `interfaceId` (ERC-165): ERC-1155, its metadata URI, ERC-2981
    /// and ERC-4906.
    /// @param interfaceId The interface id.
    /// @return True when implemented.
    function supportsInterface(bytes4 interfaceId) public view override(ERC1155, ERC2981) returns (bool) {
        return
            interfaceId == ERC4906_INTERFACE_ID ||
            ERC1155.supportsInterface(interfaceId) ||
            ERC2981.supportsInterface(interfaceId);
    }

    /// @dev The checks of a paid mint of `amount` of edition `tokenId` to `minter` (the edition exists, neither
    /// pause is on, the whitelist, the caps); returns the price of the mint.
    function _checkMint(uint256 tokenId, uint256 amount, address minter) private view returns (uint256 required) {
        Edition storage e = _editions[tokenId];
        // One SLOAD: the optimizer reads the four packed fields together.
        (uint256 price, uint256 max, uint256 maxPerTx, bool editionPaused_) = (
            e.cost,
            e.maxSupply,
            e.maxMintAmountPerTx,
            e.paused
        );
        if (maxPerTx == 0) revert NonexistentToken(tokenId);
        if (_paused) revert ContractPaused();
        if (editionPaused_) revert EditionPaused(tokenId);
        if (_whitelistOnly && !_whitelist[minter]) revert NotWhitelisted(minter);
        _checkMintAmount(tokenId, max, maxPerTx, amount);
        // A 128-bit price times an amount of at most 2^32 - 1 (checked above) cannot overflow.
        unchecked {
            required = price * amount;
        }
    }

    function _checkMintAmount(uint256 tokenId, uint256 max, uint256 maxPerTx, uint256 amount) private view {
        if (amount == 0 || amount > maxPerTx) revert InvalidMintAmount(amount, maxPerTx);
        if (max == 0) return;
        uint256 remaining;
        // Reading the supply here warms the slot that the mint writes next; no mint ever passes `max`.
        unchecked {
            remaining = max - totalSupply(tokenId);
        }
        if (amount > remaining) revert MaxSupplyExceeded(amount, remaining);
    }

    function _existingEdition(uint256 tokenId) private view returns (Edition memory edition_) {
        edition_ = _editions[tokenId];
        if (edition_.maxMintAmountPerTx == 0) revert NonexistentToken(tokenId);
    }

    function _editionStorage(uint256 tokenId) private view returns (Edition storage edition_) {
        edition_ = _editions[tokenId];
        if (edition_.maxMintAmountPerTx == 0) revert NonexistentToken(tokenId);
    }
}
