// Package hints reads what an HTTP server says about when it may be asked
// again: Retry-After and the rate-limit fields real APIs send. Every
// reader takes any bytes without failing or panicking: a malformed value
// asks for nothing.
//
// Where a value can be read more than one way, the readers choose the
// reading that never comes back sooner than the server could have meant
// (the caller caps what they return):
//
//   - a Retry-After with a decimal part ("2.0", Shopify's) is rounded up
//     to whole seconds;
//   - a reset below 1e9 is delta seconds, even where the server meant
//     milliseconds (a reset of 600000 waits 600000 seconds, capped);
//     from 1e9 on it is a Unix time in seconds, from 1e12 on in
//     milliseconds;
//   - a 429 without Retry-After whose rate-limit fields say requests
//     remain waits for the longest reset they give: another quota, such
//     as OpenAI's tokens or a quota the fields do not show, is used up
//     (with Retry-After the server said when: GitHub's secondary limits
//     answer so while the hourly quota has requests left);
//   - where several fields ask for a wait, the longest wins.
package hints
