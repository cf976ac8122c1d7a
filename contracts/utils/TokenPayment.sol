// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IERC20Permit} from "@openzeppelin/contracts/token/ERC20/extensions/IERC20Permit.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";
import {MessageHashUtils} from "@openzeppelin/contracts/utils/cryptography/MessageHashUtils.sol";

/// @notice A mint priced in a payment token was sent ether; a token-priced mint takes none.
error NativePaymentNotAccepted();
/// @notice `mintWithPermit` needs a payment token; the price is in the native coin.
error NotTokenPriced();
/// @notice `buyer` allows the contract to take `allowance` of the payment token, below the `required` price,
/// after its permit was applied (or failed to apply).
error PaymentTokenAllowanceTooLow(address buyer, uint256 allowance, uint256 required);
/// @notice The permit did not apply, and what `buyer` allows the contract is not a permit of `buyer`'s that was
/// applied and left unspent (this signature, at the nonce before the current one, and an allowance of exactly its
/// value): an allowance `buyer` gave for something else is never spent by a call `buyer` did not sign, nor twice.
error PermitNotApplied(address buyer);
/// @notice `token` is not a contract, so it cannot be a payment token.
error InvalidPaymentToken(address token);

/// @title TokenPayment
/// @notice How the reference contracts take a price in an ERC-20 payment token: a pull from the payer with
/// SafeERC20, and the EIP-2612 permit of a buyer that someone else may send.
library TokenPayment {
    using SafeERC20 for IERC20;

    /// @dev EIP-2612's permit type hash.
    bytes32 private constant PERMIT_TYPEHASH =
        // solhint-disable-next-line gas-small-strings
        keccak256("Permit(address owner,address spender,uint256 value,uint256 nonce,uint256 deadline)");

    /// @notice Takes `amount` of `token` from `payer` into this contract; nothing when `amount` is zero.
    /// @dev SafeERC20: a token that returns false, or nothing, is handled; a failed transfer reverts.
    /// @param token The payment token.
    /// @param payer The account the amount is taken from; it must allow this contract at least `amount`.
    /// @param amount The amount, in the token's smallest unit.
    function pull(address token, address payer, uint256 amount) internal {
        if (amount != 0) IERC20(token).safeTransferFrom(payer, address(this), amount);
    }

    /// @notice Applies `buyer`'s EIP-2612 permit of `amount` to this contract, then checks the allowance.
    /// @dev The permit is applied in a `try`: one someone else already sent (a front-run, or a copy from the
    /// mempool) makes it revert, and must not block the mint (OpenZeppelin's IERC20Permit security note).
    /// When it did not apply, the allowance must cover `amount`; then it must be exactly `amount` (what an applied
    /// permit set, unspent: a permit only this contract can spend), and the signature must be `buyer`'s permit of
    /// `amount` to this contract at the nonce just used. So a standing allowance `buyer` gave for its own mints is
    /// never spent by a call with a signature `buyer` did not make, and a spent permit is not replayed on it.
    /// @param token The payment token (EIP-2612).
    /// @param buyer The permit's owner, who pays.
    /// @param amount The price, and the permit's value.
    /// @param deadline The permit's deadline.
    /// @param v The permit signature's v.
    /// @param r The permit signature's r.
    /// @param s The permit signature's s.
    function permit(
        address token,
        address buyer,
        uint256 amount,
        uint256 deadline,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) internal {
        try IERC20Permit(token).permit(buyer, address(this), amount, deadline, v, r, s) {
            return;
        } catch {
            uint256 allowance = IERC20(token).allowance(buyer, address(this));
            if (allowance < amount) revert PaymentTokenAllowanceTooLow(buyer, allowance, amount);
            if (allowance != amount || !_appliedPermit(token, buyer, amount, deadline, v, r, s)) {
                revert PermitNotApplied(buyer);
            }
        }
    }

    /// @dev Whether (v, r, s) is `buyer`'s permit of `amount` to this contract at the nonce before the current one,
    /// i.e. one that has been applied. False for a token without `nonces` or `DOMAIN_SEPARATOR`.
    function _appliedPermit(
        address token,
        address buyer,
        uint256 amount,
        uint256 deadline,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) private view returns (bool) {
        uint256 nonce;
        bytes32 domain;
        try IERC20Permit(token).nonces(buyer) returns (uint256 n) {
            nonce = n;
        } catch {
            return false;
        }
        if (nonce == 0) return false;
        try IERC20Permit(token).DOMAIN_SEPARATOR() returns (bytes32 d) {
            domain = d;
        } catch {
            return false;
        }
        bytes32 structHash = keccak256(abi.encode(PERMIT_TYPEHASH, buyer, address(this), amount, nonce - 1, deadline));
        (address signer, ECDSA.RecoverError error_, ) = ECDSA.tryRecover(
            MessageHashUtils.toTypedDataHash(domain, structHash),
            v,
            r,
            s
        );
        return error_ == ECDSA.RecoverError.NoError && signer == buyer;
    }
}
