package guard_test

import (
	"errors"
	"strings"
	"testing"

	"nameservice.dev/nameservice/guard"
	"nameservice.dev/nameservice/model"
)

func TestCheckPayloadNamesTheLimit(t *testing.T) {
	deep := map[string]any{}
	for range guard.MaxPayloadDepth {
		deep = map[string]any{"a": deep}
	}
	if err := guard.CheckPayload("config", model.Object(deep)); err == nil || !strings.Contains(err.Error(), "config nests more than 20") {
		t.Errorf("CheckPayload(%d deep) = %v", guard.MaxPayloadDepth+1, err)
	}
	big := model.Object{"s": strings.Repeat("x", guard.MaxPayloadBytes)}
	if err := guard.CheckPayload("status", big); !errors.Is(err, model.ErrInvalidArgument) || !strings.Contains(err.Error(), "status is 65544 bytes of JSON, over the limit of 65536") {
		t.Errorf("CheckPayload(big) = %v", err)
	}
}
