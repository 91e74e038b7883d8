/* Route Studio: tell the server the viewer's time zone (an IANA name in the `tz` cookie), so
 * pages draw calendar days and hours where the reader is (studio.shared.timezones). */
(function () {
  "use strict";
  var zone;
  try { zone = Intl.DateTimeFormat().resolvedOptions().timeZone; } catch (e) { return; }
  if (!zone || !/^[A-Za-z0-9_+\/-]+$/.test(zone)) return;
  if (document.cookie.split("; ").indexOf("tz=" + zone) >= 0) return;
  document.cookie = "tz=" + zone + "; path=/; max-age=31536000; samesite=lax";
})();
