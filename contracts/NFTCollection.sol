// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC721A, IERC721A} from "erc721a/contracts/ERC721A.sol";
import {ERC721AQueryable} from "erc721a/contracts/extensions/ERC721AQueryable.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {ReentrancyGuard} from "@openzeppelin/contracts/utils/ReentrancyGuard.sol";
import {ERC2981} from "@openzeppelin/contracts/token/common/ERC2981.sol";
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {MerkleProof} from "@openzeppelin/contracts/utils/cryptography/MerkleProof.sol";
import {IERC4906} from "@openzeppelin/contracts/interfaces/IERC4906.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
// The payment errors are declared there, at file level, and imported by name so that they are this contract's.
import {TokenPayment, NativePaymentNotAccepted, NotTokenPriced, InvalidPaymentToken} from "./utils/TokenPayment.sol";

/// @title NFTCollection
/// @notice The reference ERC-721 collection that the NFT operations service acts on:
/// sequential token ids from 1, paid minting, an owner-only free mint, a whitelist,
/// a pause switch, a settable price (in the native coin, or in an ERC-20 payment token, with EIP-2612 permit
/// mints that anyone may send for the buyer) and an owner withdrawal; and for drops: airdrops, a batch
/// whitelist, a Merkle allowlist, EIP-712 mint vouchers and ERC-2981 royalties.
/// @dev Built on ERC721A so a batch mint writes one ownership slot instead of one per token;
/// the price, both switches and whether the price is in a payment token share one storage slot because
/// `mint` reads them together.
/// An address's allowlist mints are counted in ERC721A's 64-bit aux field, which shares the slot
/// its balance is written to anyway.
contract NFTCollection is ERC721AQueryable, Ownable, ReentrancyGuard, ERC2981, EIP712 {
    /// @notice A mint voucher: the voucher signer lets `to` mint `amount` tokens at `price` wei each
    /// until `validUntil` (unix seconds); `id` can be redeemed once.
    /// @dev Field order is the EIP-712 type's, which signers already use; it is never stored, so packing is moot.
    // solhint-disable-next-line gas-struct-packing
    struct Voucher {
        address to;
        uint256 amount;
        uint256 price;
        uint64 validUntil;
        bytes32 id;
    }

    /// @dev The EIP-712 type hash of `Voucher`.
    bytes32 private constant VOUCHER_TYPEHASH =
        // solhint-disable-next-line gas-small-strings
        keccak256("Voucher(address to,uint256 amount,uint256 price,uint64 validUntil,bytes32 id)");

    /// @notice Minting is paused.
    error ContractPaused();
    /// @notice `amount` is zero or above `maxPerTx`.
    error InvalidMintAmount(uint256 amount, uint256 maxPerTx);
    /// @notice Minting `amount` more tokens would pass the maximum supply; `remaining` are left.
    error MaxSupplyExceeded(uint256 amount, uint256 remaining);
    /// @notice The value sent is below the price of the mint.
    error InsufficientPayment(uint256 required, uint256 sent);
    /// @notice The value sent is not exactly the price of the mint (an allowlist or voucher mint keeps no overpayment).
    error IncorrectPayment(uint256 required, uint256 sent);
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
    /// @notice An airdrop's lists of recipients and amounts differ in length, or are empty.
    error InvalidAirdrop(uint256 recipients, uint256 amounts);
    /// @notice `account` with `allowance` and `price` is not a leaf of the allowlist (or the proof is wrong).
    error NotAllowlisted(address account, uint256 allowance, uint256 price);
    /// @notice `account` has minted `minted` of its `allowance` allowlist tokens; `amount` more would pass it.
    error AllowanceExceeded(address account, uint256 allowance, uint256 minted, uint256 amount);
    /// @notice The voucher `id` is past its `validUntil`.
    error VoucherExpired(bytes32 id, uint64 validUntil);
    /// @notice The voucher `id` has already been redeemed.
    error VoucherUsed(bytes32 id);
    /// @notice The voucher's signature recovers to `recovered`, not to the voucher signer `signer`.
    error VoucherSignerMismatch(address recovered, address signer);
    /// @notice The voucher is for `to`, and `caller` sent it.
    error VoucherNotForCaller(address to, address caller);

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
    /// @notice The allowlist's Merkle root changed.
    event AllowlistSet(bytes32 previousRoot, bytes32 root);
    /// @notice `account` minted `amount` tokens from the allowlist (`allowlistMinted` has its total).
    event AllowlistMinted(address indexed account, uint256 amount);
    /// @notice The address whose signature makes a voucher valid changed.
    event VoucherSignerChanged(address indexed previousSigner, address indexed signer);
    /// @notice Voucher `id` was redeemed: `amount` tokens minted to `to` at `price` wei each.
    event VoucherRedeemed(bytes32 indexed id, address indexed to, uint256 amount, uint256 price);
    /// @notice The royalty of every token changed (ERC-2981): `bps` hundredths of a percent to `receiver`.
    event DefaultRoyaltyChanged(address indexed receiver, uint96 bps);
    /// @notice The payment token changed (zero: the native coin); prices are in its smallest unit from now on.
    event PaymentTokenChanged(address indexed previousToken, address indexed token);
    /// @notice `amount` of the payment token `token` were sent to `to`.
    event PaymentTokenWithdrawn(address indexed to, address indexed token, uint256 amount);

    /// @notice The largest number of tokens that will ever exist.
    uint256 public immutable maxSupply;
    /// @notice The largest number of tokens one mint call may create.
    /// @dev Bounds the cost of the first transfer of a late token of a batch (ERC721A's ownership scan).
    uint256 public immutable maxMintAmountPerTx;

    // One slot: everything `mint` checks is read with a single SLOAD.
    uint128 private _cost;
    bool private _paused;
    bool private _whitelistOnly;
    // Whether `_paymentToken` is set: the native mint path reads only this bit, not the token's slot.
    bool private _tokenPriced;

    string private _baseTokenURI;
    mapping(address account => bool listed) private _whitelist;

    /// @notice The Merkle root of the allowlist; zero when there is none.
    bytes32 public allowlistRoot;
    /// @notice The address whose EIP-712 signature makes a voucher valid; zero when vouchers are off.
    address public voucherSigner;
    mapping(bytes32 id => bool used) private _voucherUsed;

    // Metadata: a provenance committed before the sale, then a reveal that shifts every token by a
    // starting index no one knew at the commit. ERC-4906's events come from OpenZeppelin's IERC4906;
    // the interface is not inherited because its IERC721 would clash with ERC721A's own declarations.

    /// @dev ERC-4906's interface id (the EIP fixes it; IERC4906 declares no function of its own).
    bytes4 private constant ERC4906_INTERFACE_ID = bytes4(0x49064906);

    /// @notice The provenance has already been set; it is set once.
    error ProvenanceAlreadySet();
    /// @notice A provenance needs a non-zero hash and a count of at least one.
    error InvalidProvenance(bytes32 hash, uint256 count);
    /// @notice `reveal` needs the provenance set first.
    error ProvenanceNotSet();
    /// @notice The collection has already been revealed; it is revealed once.
    error AlreadyRevealed();
    /// @notice `reveal` needs `revealBlock` mined: it is now block `blockNumber`.
    error RevealTooEarly(uint256 revealBlock, uint256 blockNumber);
    /// @notice The reveal delay is outside 1 to `MAX_REVEAL_DELAY` blocks.
    error InvalidRevealDelay(uint256 delay);
    /// @notice `refreshMetadata` needs `fromTokenId <= toTokenId`.
    error InvalidTokenRange(uint256 fromTokenId, uint256 toTokenId);

    /// @notice The provenance was committed: `hash` of the `count` token documents, in token id order.
    event ProvenanceSet(bytes32 hash, uint256 count);
    /// @notice The collection was revealed: token `t` shows document `((t - 1 + startingIndex) % count) + 1`.
    event Revealed(uint256 startingIndex);
    /// @notice `reveal` came more than 256 blocks after `previousBlock`, whose hash the chain no longer
    /// answers: the reveal waits for `revealBlock` instead.
    event RevealBlockReset(uint256 previousBlock, uint256 revealBlock);

    /// @notice keccak256 of the concatenated keccak256 of each token document (RFC 8785 bytes), ids 1..count;
    /// zero until set.
    bytes32 public provenance;
    /// @notice How many token documents `provenance` covers; zero until set.
    uint256 public provenanceCount;
    /// @dev `startingIndex + 1` once revealed, zero before: one slot that `reveal` always sets non-zero, so
    /// that its gas does not depend on the index drawn (a zero index would otherwise save the 20,000 gas of
    /// a fresh slot, and an estimate taken in one block could fall short in the next).
    uint256 private _startingIndexPlusOne;
    /// @notice The block whose hash fixes the starting index, set by `setProvenance` after its own block;
    /// zero until set.
    /// @dev Packed with the delay, which `reveal` reuses when it must move the block.
    uint128 public revealBlock;
    uint128 private _revealDelay;

    /// @notice The longest delay between the commit and the reveal block.
    uint256 public constant MAX_REVEAL_DELAY = 256;

    /// @dev The ERC-20 the price is in; zero for the native coin (`_tokenPriced` mirrors it).
    address private _paymentToken;

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
    ) ERC721A(name_, symbol_) Ownable(msg.sender) EIP712(name_, "1") {
        if (maxSupply_ == 0 || maxMintAmountPerTx_ == 0) revert InvalidConfiguration();
        if (cost_ > type(uint128).max) revert CostTooHigh(cost_, type(uint128).max);
        _baseTokenURI = baseURI_;
        _cost = uint128(cost_);
        maxSupply = maxSupply_;
        maxMintAmountPerTx = maxMintAmountPerTx_;
    }

    /// @notice Mints `amount` tokens to the caller for `cost() * amount` wei, or, when a payment token is set,
    /// for `cost() * amount` of that token, taken from the caller (who must have approved this contract).
    /// @dev Reverts while paused, for a caller off the whitelist in whitelist-only mode,
    /// for an amount of 0 or above `maxMintAmountPerTx`, past `maxSupply`, or when underpaid.
    /// Ether above the price is kept by the contract. With a payment token, any ether sent reverts
    /// (`NativePaymentNotAccepted`), and the token is pulled after the mint (the last interaction).
    /// @param amount The number of tokens to mint.
    function mint(uint256 amount) external payable {
        (uint256 price, bool paused_, bool whitelistOnly_, bool tokenPriced) = (
            _cost,
            _paused,
            _whitelistOnly,
            _tokenPriced
        );
        if (paused_) revert ContractPaused();
        if (whitelistOnly_ && !_whitelist[msg.sender]) revert NotWhitelisted(msg.sender);
        _checkMintAmount(amount);
        uint256 required = price * amount;
        if (tokenPriced) {
            if (msg.value != 0) revert NativePaymentNotAccepted();
            _safeMint(msg.sender, amount);
            TokenPayment.pull(_paymentToken, msg.sender, required);
            return;
        }
        if (msg.value < required) revert InsufficientPayment(required, msg.value);
        _safeMint(msg.sender, amount);
    }

    /// @notice Mints `amount` tokens to `buyer` for `cost() * amount` of the payment token, taken from `buyer`
    /// with `buyer`'s EIP-2612 permit of exactly that price to this contract. Anyone may send it: the sender
    /// pays the gas, never the price.
    /// @dev The whitelist (of `buyer`), the pause, `maxMintAmountPerTx` and `maxSupply` apply as for `mint`.
    /// A permit someone else already applied does not block the mint (see `TokenPayment.permit`).
    /// Reverts with `NotTokenPriced` when the price is in the native coin.
    /// @param buyer The account that signed the permit, pays and receives the tokens.
    /// @param amount The number of tokens to mint.
    /// @param deadline The permit's deadline (unix seconds).
    /// @param v The permit signature's v.
    /// @param r The permit signature's r.
    /// @param s The permit signature's s.
    function mintWithPermit(
        address buyer,
        uint256 amount,
        uint256 deadline,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external nonReentrant {
        uint256 price = _cost;
        if (!_tokenPriced) revert NotTokenPriced();
        if (_paused) revert ContractPaused();
        if (_whitelistOnly && !_whitelist[buyer]) revert NotWhitelisted(buyer);
        _checkMintAmount(amount);
        uint256 required = price * amount;
        address token = _paymentToken;
        TokenPayment.permit(token, buyer, required, deadline, v, r, s);
        _safeMint(buyer, amount);
        TokenPayment.pull(token, buyer, required);
    }

    /// @notice Sets the ERC-20 token prices are in (`cost`, allowlist leaves' and vouchers' prices, in its
    /// smallest unit); zero for the native coin. Owner only.
    /// @dev The price is not converted: set `cost` in the new unit too. `withdraw` sends the balance of the
    /// current payment token only, so withdraw before changing it.
    /// @param token The payment token, a contract; or zero.
    function setPaymentToken(address token) external onlyOwner {
        _setPaymentToken(token);
    }

    /// @notice The ERC-20 token prices are in; zero when they are in the native coin (wei).
    /// @return The payment token.
    function paymentToken() external view returns (address) {
        return _paymentToken;
    }

    /// @dev `setPaymentToken` without the owner check, for a constructor too (NFTDropCollection): refuses an
    /// address without code, does nothing for the current token, else sets it and emits `PaymentTokenChanged`.
    /// @param token The payment token, a contract; or zero.
    function _setPaymentToken(address token) internal {
        if (token != address(0) && token.code.length == 0) revert InvalidPaymentToken(token);
        address previous = _paymentToken;
        if (previous == token) return;
        _paymentToken = token;
        _tokenPriced = token != address(0);
        emit PaymentTokenChanged(previous, token);
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

    /// @notice Sets the price of one token in wei (in the payment token's smallest unit when one is set); owner only.
    /// @param newCost The new price; at most 2^128 - 1.
    function setCost(uint256 newCost) external onlyOwner {
        if (newCost > type(uint128).max) revert CostTooHigh(newCost, type(uint128).max);
        uint256 previous = _cost;
        if (previous == newCost) return;
        _cost = uint128(newCost);
        emit CostChanged(previous, newCost);
    }

    /// @notice Sets the prefix of every token URI; owner only. Emits ERC-4906's `BatchMetadataUpdate`
    /// over every token id, so marketplaces read the metadata again.
    /// @param baseURI_ The new prefix.
    function setBaseURI(string calldata baseURI_) external onlyOwner {
        _baseTokenURI = baseURI_;
        emit BaseURIChanged(baseURI_);
        emit IERC4906.BatchMetadataUpdate(1, type(uint256).max);
    }

    /// @notice Asks marketplaces to read the metadata of tokens `fromTokenId` to `toTokenId` again
    /// (ERC-4906); owner only.
    /// @param fromTokenId The first token id.
    /// @param toTokenId The last token id (inclusive).
    function refreshMetadata(uint256 fromTokenId, uint256 toTokenId) external onlyOwner {
        if (fromTokenId > toTokenId) revert InvalidTokenRange(fromTokenId, toTokenId);
        if (fromTokenId == toTokenId) emit IERC4906.MetadataUpdate(fromTokenId);
        else emit IERC4906.BatchMetadataUpdate(fromTokenId, toTokenId);
    }

    /// @notice Commits the provenance of the collection's metadata, once; owner only. Fixes the reveal
    /// block `revealDelay` blocks after this one: its hash, unknown to anyone now, will fix the starting index.
    /// @dev `hash` is keccak256(concat(keccak256(document 1), ..., keccak256(document count))), each document
    /// in its RFC 8785 canonical bytes, so anyone can recompute it from the served documents after the reveal.
    /// @param hash The provenance hash.
    /// @param count The number of documents it covers (token ids 1 to `count`).
    /// @param revealDelay Blocks from this one to the reveal block, 1 to `MAX_REVEAL_DELAY`.
    function setProvenance(bytes32 hash, uint256 count, uint256 revealDelay) external onlyOwner {
        if (provenanceCount != 0) revert ProvenanceAlreadySet();
        if (hash == bytes32(0) || count == 0) revert InvalidProvenance(hash, count);
        if (revealDelay == 0 || revealDelay > MAX_REVEAL_DELAY) revert InvalidRevealDelay(revealDelay);
        provenance = hash;
        provenanceCount = count;
        // Both fit: a block number and a delay of at most 256.
        revealBlock = uint128(block.number + revealDelay);
        _revealDelay = uint128(revealDelay);
        emit ProvenanceSet(hash, count);
    }

    /// @notice Reveals the collection, once `revealBlock` is mined; anyone may call it. Fixes
    /// `startingIndex = uint256(blockhash(revealBlock)) % provenanceCount`. When `revealBlock` is more than
    /// 256 blocks old (the chain no longer answers its hash) it moves the reveal block instead, as far
    /// ahead as the commit did, with `RevealBlockReset`, and reveals nothing.
    /// @dev The owner fixed the block before its hash existed and cannot choose it by waiting; only its
    /// producer could withhold it, at the cost of its reward. Open to anyone so that an owner who never
    /// reveals cannot keep the buyers waiting.
    function reveal() external {
        uint256 count = provenanceCount;
        if (count == 0) revert ProvenanceNotSet();
        if (_startingIndexPlusOne != 0) revert AlreadyRevealed();
        uint256 target = revealBlock;
        if (block.number <= target) revert RevealTooEarly(target, block.number);
        if (block.number - target > 256) {
            uint256 next = block.number + _revealDelay;
            revealBlock = uint128(next);
            emit RevealBlockReset(target, next);
            return;
        }
        uint256 index = uint256(blockhash(target)) % count;
        _startingIndexPlusOne = index + 1;
        emit Revealed(index);
        emit IERC4906.BatchMetadataUpdate(1, type(uint256).max);
    }

    /// @notice Whether `reveal` has run.
    function revealed() public view returns (bool) {
        return _startingIndexPlusOne != 0;
    }

    /// @notice The shift of every token's document, fixed by `reveal`; zero before.
    function startingIndex() public view returns (uint256) {
        uint256 plusOne = _startingIndexPlusOne;
        return plusOne == 0 ? 0 : plusOne - 1;
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

    /// @notice Mints `amounts[i]` tokens to each `recipients[i]` in one transaction; owner only, works while paused.
    /// @dev Keeps `maxSupply`, not `maxMintAmountPerTx` (the owner's batch). A recipient's amount is minted
    /// in pieces of at most `maxMintAmountPerTx`, so that the first transfer of a late token scans at most
    /// that many ownership slots. Like ERC721A's batch mint it calls no receiver hook, so a contract
    /// recipient must be able to hold tokens without one.
    /// @param recipients The addresses that receive tokens.
    /// @param amounts The number of tokens each receives (each at least 1).
    function airdrop(address[] calldata recipients, uint256[] calldata amounts) external onlyOwner {
        uint256 count = recipients.length;
        if (count == 0 || count != amounts.length) revert InvalidAirdrop(count, amounts.length);
        uint256 total;
        for (uint256 i; i < count; ++i) {
            uint256 amount = amounts[i];
            if (amount == 0) revert InvalidMintAmount(0, maxMintAmountPerTx);
            total += amount;
        }
        uint256 remaining = maxSupply - _totalMinted();
        if (total > remaining) revert MaxSupplyExceeded(total, remaining);
        uint256 piece = maxMintAmountPerTx;
        for (uint256 i; i < count; ++i) {
            address to = recipients[i];
            uint256 left = amounts[i];
            while (left > piece) {
                _mint(to, piece);
                left -= piece;
            }
            _mint(to, left);
        }
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

    /// @notice Sets the Merkle root of the allowlist; owner only. Zero turns the allowlist off.
    /// @dev Leaves are OpenZeppelin StandardMerkleTree leaves of (address, allowance, price):
    /// keccak256(bytes.concat(keccak256(abi.encode(account, allowance, price)))). Allowlist mint counts
    /// carry over to a new root.
    /// @param root The new root.
    function setAllowlist(bytes32 root) external onlyOwner {
        bytes32 previous = allowlistRoot;
        if (previous == root) return;
        allowlistRoot = root;
        emit AllowlistSet(previous, root);
    }

    /// @notice Mints `amount` tokens to the caller as an allowlisted address, at `price` wei each (of the payment
    /// token, sending no ether, when one is set).
    /// @dev Reverts while paused, for an amount of 0 or above `maxMintAmountPerTx`, past `maxSupply`,
    /// for a leaf that the proof does not tie to the root, past the caller's allowance, or for a value that
    /// is not exactly the price (an overpayment would be kept).
    /// @param amount The number of tokens to mint.
    /// @param allowance The caller's allowance, as in its leaf.
    /// @param price The caller's price per token in wei, as in its leaf.
    /// @param proof The Merkle proof of the caller's leaf.
    function allowlistMint(
        uint256 amount,
        uint256 allowance,
        uint256 price,
        bytes32[] calldata proof
    ) external payable {
        if (_paused) revert ContractPaused();
        _checkMintAmount(amount);
        bytes32 leaf = keccak256(bytes.concat(keccak256(abi.encode(msg.sender, allowance, price))));
        if (!MerkleProof.verifyCalldata(proof, allowlistRoot, leaf)) {
            revert NotAllowlisted(msg.sender, allowance, price);
        }
        uint256 minted = _getAux(msg.sender);
        if (amount > allowance || minted > allowance - amount) {
            revert AllowanceExceeded(msg.sender, allowance, minted, amount);
        }
        uint256 required = price * amount;
        bool tokenPriced = _checkExactPayment(required);
        // minted + amount never nears 2^64: each call adds at most maxMintAmountPerTx.
        _setAux(msg.sender, uint64(minted + amount));
        emit AllowlistMinted(msg.sender, amount);
        _safeMint(msg.sender, amount);
        if (tokenPriced) TokenPayment.pull(_paymentToken, msg.sender, required);
    }

    /// @notice Sets the address whose EIP-712 signature makes a voucher valid; owner only. Zero turns vouchers off.
    /// @param signer The new voucher signer.
    function setVoucherSigner(address signer) external onlyOwner {
        address previous = voucherSigner;
        if (previous == signer) return;
        voucherSigner = signer;
        emit VoucherSignerChanged(previous, signer);
    }

    /// @notice Mints `voucher.amount` tokens to the caller, who must be `voucher.to`, for
    /// `voucher.price * voucher.amount` wei (of the payment token, sending no ether, when one is set); the voucher signer signed it (EIP-712, domain: the
    /// collection's name, version "1"). Each voucher id mints once.
    /// @dev Reverts while paused, past `validUntil`, for a used id, for another caller than `to`, for a
    /// signature that is not the voucher signer's, for an amount of 0 or above `maxMintAmountPerTx`,
    /// past `maxSupply`, or for a value that is not exactly the price (an overpayment would be kept).
    /// @param voucher The voucher.
    /// @param signature The voucher signer's signature of it (65 bytes, or 64 in EIP-2098 form).
    function mintWithVoucher(Voucher calldata voucher, bytes calldata signature) external payable {
        if (_paused) revert ContractPaused();
        if (block.timestamp > voucher.validUntil) revert VoucherExpired(voucher.id, voucher.validUntil);
        if (_voucherUsed[voucher.id]) revert VoucherUsed(voucher.id);
        if (msg.sender != voucher.to) revert VoucherNotForCaller(voucher.to, msg.sender);
        bytes32 digest = _hashTypedDataV4(
            keccak256(
                abi.encode(
                    VOUCHER_TYPEHASH,
                    voucher.to,
                    voucher.amount,
                    voucher.price,
                    voucher.validUntil,
                    voucher.id
                )
            )
        );
        (address recovered, ECDSA.RecoverError error_, ) = ECDSA.tryRecover(digest, signature);
        address signer = voucherSigner;
        if (error_ != ECDSA.RecoverError.NoError || recovered != signer || signer == address(0)) {
            revert VoucherSignerMismatch(recovered, signer);
        }
        _checkMintAmount(voucher.amount);
        uint256 required = voucher.price * voucher.amount;
        bool tokenPriced = _checkExactPayment(required);
        _voucherUsed[voucher.id] = true;
        emit VoucherRedeemed(voucher.id, voucher.to, voucher.amount, voucher.price);
        _safeMint(voucher.to, voucher.amount);
        if (tokenPriced) TokenPayment.pull(_paymentToken, msg.sender, required);
    }

    /// @notice Sets the royalty of every token (ERC-2981); owner only.
    /// @param receiver The address royalties are paid to.
    /// @param bps The royalty in hundredths of a percent of the sale price (at most 10,000).
    function setDefaultRoyalty(address receiver, uint96 bps) external onlyOwner {
        _setDefaultRoyalty(receiver, bps);
        emit DefaultRoyaltyChanged(receiver, bps);
    }

    /// @notice Whether the voucher `id` has been redeemed.
    /// @param id The voucher id.
    /// @return True once redeemed.
    function voucherUsed(bytes32 id) external view returns (bool) {
        return _voucherUsed[id];
    }

    /// @notice How many tokens `account` has minted from the allowlist, across every root.
    /// @param account The address.
    /// @return The count.
    function allowlistMinted(address account) external view returns (uint256) {
        return _getAux(account);
    }

    /// @notice Whether the contract implements `interfaceId` (ERC-165): ERC-721, its metadata, ERC-2981
    /// and ERC-4906.
    /// @param interfaceId The interface id.
    /// @return True when implemented.
    function supportsInterface(
        bytes4 interfaceId
    ) public view override(ERC721A, IERC721A, ERC2981) returns (bool) {
        return
            interfaceId == ERC4906_INTERFACE_ID ||
            ERC721A.supportsInterface(interfaceId) ||
            ERC2981.supportsInterface(interfaceId);
    }

    /// @notice The price of one token in wei, or in the payment token's smallest unit when one is set.
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

    /// @dev For the allowlist and voucher mints, which keep no overpayment: in the native coin the value must be
    /// exactly `required`; with a payment token it must be zero (the caller pays `required` of the token,
    /// pulled after the mint). Returns whether the price is in a payment token.
    function _checkExactPayment(uint256 required) private view returns (bool tokenPriced) {
        tokenPriced = _tokenPriced;
        if (tokenPriced) {
            if (msg.value != 0) revert NativePaymentNotAccepted();
        } else if (msg.value != required) revert IncorrectPayment(required, msg.value);
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
