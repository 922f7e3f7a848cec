package store

import (
	"math"
	"strings"
)

// A fair claim leases the oldest due jobs of a queue such that no owner
// (the user the job is for) ends up with more than a share of them leased:
//
//   - busy counts each owner's jobs in flight (leased, lease not run out),
//     from an index of the leased rows only;
//   - due walks the due jobs oldest first, passing over those of an owner
//     already at the share, and stops after a window of candidates, so
//     that a long queue costs a claim no more than the window;
//   - the candidates are numbered per owner, after the owner's jobs in
//     flight, and only those within the share are taken, at most n.
//
// Parameters: ?1 the new lease's end, ?2 now, ?3 the share, ?4 the window,
// ?5 n. An owner with jobs past the window waits for the next claim, which
// the dispatch loop makes at once after a claim that took jobs.
const claimFairSQL = `UPDATE {table} SET lease_until = ?1
	WHERE id IN (
		WITH busy AS (
			SELECT owner_id, count(*) AS n FROM (
				SELECT {owner} AS owner_id FROM {from} WHERE j.lease_until > ?2) leased
			GROUP BY owner_id),
		due AS (
			SELECT j.id, {owner} AS owner_id, j.next_attempt_at FROM {from}
			WHERE {queued} AND j.next_attempt_at <= ?2 AND (j.lease_until IS NULL OR j.lease_until <= ?2)
				AND {owner} NOT IN (SELECT owner_id FROM busy WHERE n >= ?3)
			ORDER BY j.next_attempt_at LIMIT ?4{lock})
		SELECT id FROM (
			SELECT id, next_attempt_at, row_number() OVER (PARTITION BY owner_id ORDER BY next_attempt_at, id)
				+ COALESCE((SELECT b.n FROM busy b WHERE b.owner_id = due.owner_id), 0) AS slot
			FROM due) ranked
		WHERE slot <= ?3 ORDER BY next_attempt_at, id LIMIT ?5)
	RETURNING {returning}`

// fairQueue is what claimFairSQL needs to know of a queue table. Its rows
// are j in from; owner is the SQL of a row's owner.
type fairQueue struct {
	table, from, owner, queued, returning string
}

// claimSQL is the fair claim of q, for this store's database.
func (s *Store) claimSQL(q fairQueue) string {
	return strings.NewReplacer("{table}", q.table, "{from}", q.from, "{owner}", q.owner, "{queued}", q.queued,
		"{lock}", s.dialect.claimLock(), "{returning}", q.returning).Replace(claimFairSQL)
}

// noShare is a share no owner reaches: a claim without a bound per owner.
const noShare = math.MaxInt32

// claimWindow is how many due jobs a claim of n looks at, past the jobs of
// owners at their share.
func claimWindow(n int) int { return max(4*n, 32) }

// The queues claimed fairly. A retry of a push to one device carries its
// owner (0024); a message's fan-out and update are their channel's, as a
// callback is: one or two key lookups, which the send path is spared.
var (
	pushQueue = fairQueue{table: "push_jobs", from: "push_jobs j",
		owner: `CASE WHEN j.owner_id <> '' THEN j.owner_id ELSE COALESCE((SELECT c.user_id FROM messages m
			JOIN channels c ON c.id = m.channel_id WHERE m.id = j.message_id), '') END`,
		queued: "TRUE", returning: "id, message_id, COALESCE(device_id, ''), attempts, kind"}
	deliveryQueue = fairQueue{table: "deliveries", from: "deliveries j JOIN channels c ON c.id = j.channel_id",
		owner: "c.user_id", queued: "j.state = 'pending'",
		returning: "id, message_id, channel_id, event, url, body, attempts, kind, method, headers"}
)
