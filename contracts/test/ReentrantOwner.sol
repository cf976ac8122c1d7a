// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

interface IWithdrawable {
    function withdraw() external;
}

/// @title ReentrantOwner
/// @notice Test double only: an owner contract whose receive hook tries to call `withdraw` again.
contract ReentrantOwner {
    /// @notice The collection under attack.
    IWithdrawable public victim;
    /// @notice How many times the receive hook ran.
    uint256 public receiveCount;
    /// @notice Whether the re-entering call succeeded (it must not).
    bool public reentrySucceeded;
    /// @notice The revert data of the re-entering call.
    bytes public reentryError;

    /// @notice Sets the collection to attack.
    /// @param target_ The collection.
    function setTarget(IWithdrawable target_) external {
        victim = target_;
    }

    /// @notice Starts the attack by withdrawing once.
    function attack() external {
        victim.withdraw();
    }

    // solhint-disable-next-line no-complex-fallback
    receive() external payable {
        ++receiveCount;
        if (receiveCount > 1) return;
        try victim.withdraw() {
            reentrySucceeded = true;
        } catch (bytes memory reason) {
            reentryError = reason;
        }
    }
}
