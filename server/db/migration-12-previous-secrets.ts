/**
 * Migration 12: every secret rotated out within the last 24 h keeps signing.
 *
 * An endpoint kept one previous secret: a second rotation within 24 h of the first replaced it, so
 * the first secret stopped signing at once, not 24 h after it was rotated out (API.md: "the old
 * secret keeps signing beside the new one for 24 h"). previous_secret becomes the list of the
 * secrets rotated out, newest first, each with the time it stops signing: [{"secret", "until"}].
 * previous_secret_until stays the last of those times. The rounds pass the column through as it
 * is (migrations 8 and 9), so they are unchanged.
 */
export const PREVIOUS_SECRETS_MIGRATION = {
  version: 12,
  name: "every secret rotated out in the last 24 h signs",
  sql: `
    ALTER TABLE webhook_endpoints ALTER COLUMN previous_secret TYPE jsonb USING
      CASE WHEN previous_secret IS NULL OR previous_secret_until IS NULL THEN NULL
           ELSE jsonb_build_array(jsonb_build_object('secret', previous_secret, 'until', previous_secret_until)) END;
    COMMENT ON COLUMN webhook_endpoints.previous_secret IS
      'The secrets rotated out that still sign, newest first: [{"secret", "until"}]';
  `,
};
