package dynamodb

import (
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"nameservice.dev/nameservice/internal/jsonx"
	"nameservice.dev/nameservice/model"
)

// This file converts JSON-normal payload values (see model.Object) to
// DynamoDB attribute values and back, by hand rather than through
// attributevalue, so that numbers never pass through float64: an N attribute
// becomes a json.Number holding DynamoDB's text of it.

// toAV converts a JSON-normal value to an attribute value. It returns an
// error wrapping model.ErrInvalidArgument for a value JSON cannot hold.
func toAV(v any) (types.AttributeValue, error) {
	switch x := v.(type) {
	case nil:
		return &types.AttributeValueMemberNULL{Value: true}, nil
	case bool:
		return &types.AttributeValueMemberBOOL{Value: x}, nil
	case string:
		return &types.AttributeValueMemberS{Value: x}, nil
	case json.Number:
		if !jsonx.IsNumber(string(x)) {
			return nil, fmt.Errorf("%w: %q is not a number", model.ErrInvalidArgument, string(x))
		}
		return &types.AttributeValueMemberN{Value: string(x)}, nil
	case int:
		return numberAV(int64(x)), nil
	case int64:
		return numberAV(x), nil
	case float64:
		return &types.AttributeValueMemberN{Value: strconv.FormatFloat(x, 'g', -1, 64)}, nil
	case []any:
		l, err := convert(x, toAV)
		if err != nil {
			return nil, err
		}
		return &types.AttributeValueMemberL{Value: l}, nil
	case map[string]any:
		return mapAV(x)
	case model.Object:
		return mapAV(x)
	}
	return nil, fmt.Errorf("%w: a payload value of Go type %T is not JSON", model.ErrInvalidArgument, v)
}

func numberAV(i int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(i, 10)}
}

func stringAV(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

func mapAV(x map[string]any) (types.AttributeValue, error) {
	m, err := convertMap(x, toAV)
	if err != nil {
		return nil, err
	}
	return &types.AttributeValueMemberM{Value: m}, nil
}

// fromAV converts an attribute value to a JSON-normal value. String and
// number sets become lists; binary values are not JSON and are an error.
func fromAV(av types.AttributeValue) (any, error) {
	switch x := av.(type) {
	case *types.AttributeValueMemberNULL:
		return nil, nil
	case *types.AttributeValueMemberBOOL:
		return x.Value, nil
	case *types.AttributeValueMemberS:
		return x.Value, nil
	case *types.AttributeValueMemberN:
		return json.Number(x.Value), nil
	case *types.AttributeValueMemberL:
		return convert(x.Value, fromAV)
	case *types.AttributeValueMemberM:
		return fromMapAV(x.Value)
	case *types.AttributeValueMemberSS:
		return convert(x.Value, func(s string) (any, error) { return s, nil })
	case *types.AttributeValueMemberNS:
		return convert(x.Value, func(s string) (any, error) { return json.Number(s), nil })
	}
	return nil, fmt.Errorf("attribute of type %T is not JSON", av)
}

func fromMapAV(m item) (map[string]any, error) { return convertMap(m, fromAV) }

// convert applies f to every element of l; the first error ends it.
func convert[T, U any](l []T, f func(T) (U, error)) ([]U, error) {
	out := make([]U, len(l))
	for i, e := range l {
		var err error
		if out[i], err = f(e); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// convertMap applies f to every value of m; the first error, naming its
// key, ends it.
func convertMap[T, U any](m map[string]T, f func(T) (U, error)) (map[string]U, error) {
	out := make(map[string]U, len(m))
	for k, e := range m {
		v, err := f(e)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", k, err)
		}
		out[k] = v
	}
	return out, nil
}

// MaxItemSize is DynamoDB's limit on the size of one item, in bytes.
const MaxItemSize = 400 * 1024

// itemSize estimates an item's size the way DynamoDB counts it: attribute
// names plus values, strings in UTF-8 bytes, numbers about one byte per two
// digits, three bytes of overhead per list or map and one per element.
func itemSize(item map[string]types.AttributeValue) int {
	n := 0
	for k, v := range item {
		n += len(k) + avSize(v)
	}
	return n
}

func avSize(av types.AttributeValue) int {
	switch x := av.(type) {
	case *types.AttributeValueMemberS:
		return len(x.Value)
	case *types.AttributeValueMemberN:
		return (utf8.RuneCountInString(x.Value)+1)/2 + 1
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range x.Value {
			n += 1 + avSize(e)
		}
		return n
	case *types.AttributeValueMemberM:
		n := 3
		for k, e := range x.Value {
			n += 1 + len(k) + avSize(e)
		}
		return n
	case *types.AttributeValueMemberSS:
		n := 0
		for _, e := range x.Value {
			n += len(e)
		}
		return n
	}
	return 1
}

// checkSize returns an error wrapping model.ErrInvalidArgument when item
// would exceed MaxItemSize, so that the caller learns it before a request is
// sent.
func checkSize(pk, sk string, item map[string]types.AttributeValue) error {
	if n := itemSize(item); n > MaxItemSize {
		return fmt.Errorf("%w: item %s/%s would be about %d bytes, over DynamoDB's 400 KB (%d-byte) item limit",
			model.ErrInvalidArgument, pk, sk, n, MaxItemSize)
	}
	return nil
}
