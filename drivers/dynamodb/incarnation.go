package dynamodb

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"nameservice.dev/nameservice/internal/driverutil"
	"nameservice.dev/nameservice/model"
)

// An item's incarnation names its life: Create's write ID, a new one from
// ResetHead (which moves watermarks back), or one an update adopts on an
// item without (written by Fluree). Every conditional write carries the
// incarnation seen, so that a resend never lands on an item created since.
//
// incCache remembers the incarnation last seen of each item. A stale entry
// costs one failed condition, whose returned item corrects it.
type incCache struct{ boundedMap[string, string] }

// maxCachedIncarnations bounds the cache; it is cleared when full.
const maxCachedIncarnations = 200_000

func incKey(pk, sk string) string { return pk + "\x00" + sk }

func (c *incCache) get(pk, sk string) string {
	inc, _ := c.load(incKey(pk, sk))
	return inc
}

// put records inc as item pk/sk's incarnation; "" forgets it.
func (c *incCache) put(pk, sk, inc string) {
	if inc == "" {
		c.boundedMap.forget(incKey(pk, sk))
	} else {
		c.store(incKey(pk, sk), strings.Clone(inc), maxCachedIncarnations)
	}
}

// learn records the incarnation of every item of pk in items.
func (c *incCache) learn(pk string, items map[string]item) {
	for sk, it := range items {
		inc, _ := getString(it, attrIncarnation)
		c.put(pk, sk, inc)
	}
}

// forget drops every item of pk.
func (c *incCache) forget(pk string) {
	for _, sk := range sortKeys(model.Ledger) {
		c.put(pk, sk, "")
	}
}

// incarnationOf returns the incarnation an item holds, "" for none.
func incarnationOf(it item) string {
	s, _ := getString(it, attrIncarnation)
	return s
}

// incarnationIs is the condition "the item is of incarnation inc".
func incarnationIs(inc string) expression.ConditionBuilder {
	return nameB(attrIncarnation).Equal(valueB(stringAV(inc)))
}

// writeIDs are the attributes holding an item's last three write IDs,
// newest first.
var writeIDs = []string{attrWriteID, attrWriteID1, attrWriteID2}

// pushWriteID makes id the item's newest write ID, keeping the two before.
func pushWriteID(upd expression.UpdateBuilder, id string) expression.UpdateBuilder {
	none := stringAV("")
	return upd.Set(nameB(attrWriteID2), nameB(attrWriteID1).IfNotExists(valueB(none))).
		Set(nameB(attrWriteID1), nameB(attrWriteID).IfNotExists(valueB(none))).
		Set(nameB(attrWriteID), valueB(stringAV(id)))
}

// lacksWriteID is the condition "id is none of the item's write IDs": an
// attempt of a write that landed already can never land again.
func lacksWriteID(id string) expression.ConditionBuilder {
	v := valueB(stringAV(id))
	return expression.Not(expression.Or(nameB(attrWriteID).Equal(v), nameB(attrWriteID1).Equal(v), nameB(attrWriteID2).Equal(v)))
}

// writeIDsOf returns the write IDs item it records.
func writeIDsOf(it item) driverutil.WriteIDs {
	var h driverutil.WriteIDs
	for i, n := range writeIDs {
		h[i], _ = getString(it, n)
	}
	return h
}

// getItem reads one item consistently; nil when absent.
func (d *Driver) getItem(ctx context.Context, op, pk, sk string) (item, error) {
	out, err := d.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(d.table), Key: keyOf(pk, sk), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, d.fail(ctx, op, err)
	}
	if len(out.Item) == 0 {
		return nil, nil
	}
	return out.Item, nil
}
