package server

import "nameservice.dev/nameservice/internal/cid"

// checkCID accepts exactly the content IDs Fluree's servers and clients
// print and read: a CIDv1 in multibase base32 lower case, in canonical
// form (see package cid). Other multibase encodings, which Fluree would
// re-encode, are refused, and so are IDs Fluree itself would refuse.
func checkCID(s string) error { return cid.Parse(s) }
