package objstore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"nameservice.dev/nameservice/conformance"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/layout"
	"nameservice.dev/nameservice/internal/objstore"
	"nameservice.dev/nameservice/internal/testing/objstoretest"
	"nameservice.dev/nameservice/jsonld"
	"nameservice.dev/nameservice/model"
)

// memStore is an objstore.Store in memory that enforces preconditions, as
// the real stores do; its tags are generations.
type memStore struct {
	mu   sync.Mutex
	gen  int
	objs map[string]memObject
}

type memObject struct {
	data []byte
	tag  string
}

func newMemStore() *memStore { return &memStore{objs: map[string]memObject{}} }

func (m *memStore) Get(_ context.Context, key string) ([]byte, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.objs[key]
	if !ok || len(o.data) == 0 {
		return nil, "", nil
	}
	return slices.Clone(o.data), o.tag, nil
}

func (m *memStore) Head(_ context.Context, key string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.objs[key]
	if !ok || len(o.data) == 0 {
		return "", nil
	}
	return o.tag, nil
}

// check tests pc against key; the caller holds m.mu.
func (m *memStore) check(key string, pc objstore.Precondition) error {
	o, ok := m.objs[key]
	switch {
	case pc.Absent && ok:
		return fmt.Errorf("mem: %s: %w", key, objstore.ErrPrecondition)
	case pc.Tag != "" && !ok:
		return fmt.Errorf("mem: %s: %w", key, objstore.ErrMissing)
	case pc.Tag != "" && o.tag != pc.Tag:
		return fmt.Errorf("mem: %s: %w", key, objstore.ErrPrecondition)
	}
	return nil
}

func (m *memStore) Put(_ context.Context, key string, data []byte, pc objstore.Precondition) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check(key, pc); err != nil {
		return "", err
	}
	m.gen++
	tag := strconv.Itoa(m.gen)
	m.objs[key] = memObject{data: slices.Clone(data), tag: tag}
	return tag, nil
}

func (m *memStore) Delete(_ context.Context, key string, pc objstore.Precondition) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check(key, pc); err != nil {
		return err
	}
	delete(m.objs, key)
	return nil
}

func (m *memStore) List(_ context.Context, prefix, startAfter string, fn func(objstore.Entry) error) error {
	m.mu.Lock()
	var keys []string
	for k := range m.objs {
		if strings.HasPrefix(k, prefix) && k > startAfter {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	objs := make([]memObject, len(keys))
	for i, k := range keys {
		objs[i] = m.objs[k]
	}
	m.mu.Unlock()
	for i, k := range keys {
		if err := fn(objstore.Entry{Key: k, Tag: objs[i].tag, Size: int64(len(objs[i].data))}); err != nil {
			return err
		}
	}
	return nil
}

func (*memStore) MaybeApplied(error) bool { return false }

// memDriver is a driver.Driver made of Records over a memStore.
type memDriver struct{ *objstore.Records }

var _ driver.Driver = memDriver{}

func harness(l jsonld.Layout) conformance.Harness {
	return conformance.CorruptibleHarnessFunc(func(context.Context, *testing.T) (conformance.Opener, conformance.CorruptFunc, error) {
		st := newMemStore()
		open := func(context.Context) (driver.Driver, error) {
			return memDriver{objstore.New(st, objstore.Config{Name: "mem", Layout: l})}, nil
		}
		corrupt := func(ctx context.Context, id model.ID) error {
			files, err := layout.Files(l, id)
			if err != nil {
				return err
			}
			_, err = st.Put(ctx, files[0].Key, []byte("{not json"), objstore.Precondition{})
			return err
		}
		return open, corrupt, nil
	})
}

// TestConformance runs the driver suite over a store in memory: every
// client is its own Records (its own cache) over one shared store.
func TestConformance(t *testing.T) {
	t.Parallel()
	for _, l := range []jsonld.Layout{jsonld.LayoutB, jsonld.LayoutC} {
		t.Run(l.String(), func(t *testing.T) {
			t.Parallel()
			conformance.Run(t, harness(l))
		})
	}
}

// TestClosed checks a closed Records refuses operations.
func TestClosed(t *testing.T) {
	r := objstore.New(newMemStore(), objstore.Config{Name: "mem", Layout: jsonld.LayoutB})
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := r.Get(context.Background(), model.ID{Name: "a", Branch: "main"})
	if !errors.Is(err, model.ErrInvalidArgument) {
		t.Fatalf("Get after Close: %v, want ErrInvalidArgument", err)
	}
}

// TestSentinel checks a store's own sentinels match objstore's.
func TestSentinel(t *testing.T) {
	e := objstore.Sentinel("no such object", objstore.ErrMissing)
	if w := fmt.Errorf("x: %w", e); !errors.Is(w, objstore.ErrMissing) || errors.Is(w, objstore.ErrPrecondition) || w.Error() != "x: no such object" {
		t.Fatalf("%v", w)
	}
}

// TestDebris runs the debris scenario over the store in memory.
func TestDebris(t *testing.T) {
	for _, l := range []jsonld.Layout{jsonld.LayoutB, jsonld.LayoutC} {
		t.Run(l.String(), func(t *testing.T) {
			st := newMemStore()
			open := func(*testing.T) driver.Driver {
				return memDriver{objstore.New(st, objstore.Config{Name: "mem", Layout: l})}
			}
			raw := objstoretest.Raw{
				Get: func(ctx context.Context, key string) ([]byte, error) {
					data, _, err := st.Get(ctx, key)
					return data, err
				},
				Put: func(ctx context.Context, key string, data []byte) error {
					_, err := st.Put(ctx, key, data, objstore.Precondition{})
					return err
				},
			}
			objstoretest.Debris(t, l, open, raw)
		})
	}
}
