package conformance

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/internal/driverutil"
	"nameservice.dev/nameservice/model"
)

// purgeRaceRounds is how many rounds PurgeRacesCreate plays in Check, and
// in Run when LongEnv is set: a store that decides a create or a purge on
// a check it does not make atomic with the write (a conditional DELETE on
// some S3-compatible servers) loses about one round in a few hundred.
const purgeRaceRounds = 200

// shortPurgeRaceRounds is how many rounds Run plays otherwise: a store
// whose create is not exclusive, or whose purge removes a record created
// after it began, loses a round within the first few. The rare loss needs
// the full length, which ns check and CI play.
const shortPurgeRaceRounds = 40

// LongEnv names the environment variable that, when set, makes Run play
// its long cases at full length (scripts/test.sh -long; CI).
const LongEnv = "NS_TEST_LONG"

var groupPurgeRacesCreate = group{name: "PurgeRacesCreate", guarantee: "creates racing a purge of their ID: exactly one create wins, and the record it wrote is the one that stays", alone: true, cases: []testCase{
	{name: "OnePurgeFourCreators", long: true, run: purgeRacesCreate},
}}

// purgeRacesCreate plays e.purgeRounds rounds on one ID. Each round one
// client purges the record while raceClients others try to create it until
// one attempt begun after the purge returned has failed or one of theirs
// has succeeded. Exactly one create must succeed, and a lookup must then
// show that creator's record.
func purgeRacesCreate(e *env) {
	purger := e.client()
	creators := make([]*nameservice.NameService, raceClients)
	for i := range creators {
		creators[i] = e.client()
	}
	id := e.id("db")
	e.must(e.ns.Init(e.ctx, id))
	for round := range e.purgeRounds {
		won := e.purgeRaceRound(purger, creators, id, round)
		if len(won) != 1 {
			e.t.Fatalf("round %d: %d creates of %s succeeded (creators %v), want exactly 1", round, len(won), id, won)
		}
		rec, err := e.ns.Lookup(e.ctx, id)
		if err != nil {
			e.t.Fatalf("round %d: creator %d's create succeeded, then lookup: %v", round, won[0], err)
		}
		if want := raceAddress(won[0], round); rec.Head.Payload.String("address") != want {
			e.t.Fatalf("round %d: creator %d's create succeeded, but the record holds head %s, not %s: an acknowledged create was lost",
				round, won[0], rec.Head.Payload.String("address"), want)
		}
	}
}

// purgeRaceRound runs one round and returns the creators whose create
// succeeded.
func (e *env) purgeRaceRound(purger *nameservice.NameService, creators []*nameservice.NameService, id string, round int) []int {
	var (
		purged atomic.Bool
		mu     sync.Mutex
		won    []int
		wg     sync.WaitGroup
	)
	start := make(chan struct{})
	wg.Go(func() {
		<-start
		if err := purger.Purge(e.ctx, id); err != nil {
			e.t.Errorf("round %d: purge: %v", round, err)
		}
		purged.Store(true)
	})
	for i, c := range creators {
		wg.Go(func() {
			<-start
			ok, err := createUntilDecided(e, c, id, i, round, &purged)
			if err != nil {
				e.t.Errorf("round %d, creator %d: %v", round, i, err)
			}
			if ok {
				mu.Lock()
				won = append(won, i)
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	return won
}

// retryPause is the least a creator waits between attempts; it waits as
// long as its last attempt took, so that creators busy half the time still
// meet every step of the purge but leave the store half its time: creators
// that retried at once kept a DynamoDB Local so busy that a purge took
// minutes.
const retryPause = 200 * time.Microsecond

// createUntilDecided creates id as creator i until it succeeds or an
// attempt begun after the purge finds the ID taken.
func createUntilDecided(e *env, c *nameservice.NameService, id string, i, round int, purged *atomic.Bool) (bool, error) {
	pid, err := nameservice.ParseID(id)
	if err != nil {
		return false, err
	}
	for {
		after, begun := purged.Load(), time.Now()
		rec := model.NewLedger(pid, clock.Unix())
		rec.SetValue(nameservice.Head, nameservice.RefValue(raceAddress(i, round), 1))
		switch err := c.Import(e.ctx, rec); {
		case err == nil:
			return true, nil
		case !errors.Is(err, nameservice.ErrAlreadyExists):
			return false, err
		case after:
			return false, nil
		}
		if err := driverutil.Sleep(e.ctx, max(retryPause, time.Since(begun))); err != nil {
			return false, err
		}
	}
}

// raceAddress is the head address creator i writes in round.
func raceAddress(i, round int) string { return fmt.Sprintf("fluree:file://race/r%d/c%d", round, i) }
