// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {NFTCollection} from "./NFTCollection.sol";

/// @title NFTDropCollection
/// @notice The reference collection deployed with its drop settings: a royalty (ERC-2981), a voucher
/// signer and a payment token (ERC-20), each optional. This is what the service deploys; its functions
/// are NFTCollection's.
/// @dev A constructor of its own keeps NFTCollection's six-argument constructor (and every caller of it) as it was.
contract NFTDropCollection is NFTCollection {
    /// @param name_ The collection name (also the EIP-712 domain name of its vouchers).
    /// @param symbol_ The collection symbol.
    /// @param baseURI_ The prefix of every token URI.
    /// @param cost_ The price of one token in wei.
    /// @param maxSupply_ The largest number of tokens that will ever exist.
    /// @param maxMintAmountPerTx_ The largest number of tokens one mint call may create.
    /// @param royaltyReceiver The address royalties are paid to; zero for no royalty.
    /// @param royaltyBps The royalty in hundredths of a percent of the sale price.
    /// @param voucherSigner_ The address whose signature makes a voucher valid; zero for none.
    /// @param paymentToken_ The ERC-20 prices are in, a contract (as for `setPaymentToken`); zero for the native coin.
    constructor(
        string memory name_,
        string memory symbol_,
        string memory baseURI_,
        uint256 cost_,
        uint256 maxSupply_,
        uint256 maxMintAmountPerTx_,
        address royaltyReceiver,
        uint96 royaltyBps,
        address voucherSigner_,
        address paymentToken_
    ) NFTCollection(name_, symbol_, baseURI_, cost_, maxSupply_, maxMintAmountPerTx_) {
        if (royaltyReceiver != address(0)) {
            _setDefaultRoyalty(royaltyReceiver, royaltyBps);
            emit DefaultRoyaltyChanged(royaltyReceiver, royaltyBps);
        }
        if (voucherSigner_ != address(0)) {
            voucherSigner = voucherSigner_;
            emit VoucherSignerChanged(address(0), voucherSigner_);
        }
        if (paymentToken_ != address(0)) _setPaymentToken(paymentToken_);
    }
}
