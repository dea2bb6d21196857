// Package jsonld reads and writes the ns@v2 JSON-LD files of the file and
// object-store nameservices, and reads Fluree JSON-LD connection configs.
//
// # Reading
//
// Decode reads one file of any ns@v2 dialect by the vocabulary
// https://ns.flur.ee/db#, not by literal key strings: any prefix bound to it
// in @context ("db:", "f:" or another), full IRIs, @vocab, and a string
// @context naming the vocabulary all work. It understands the form of
// nameservice-schema-v2.md, Fluree v4 ledger and graph-source files, and
// the older f:ledgerCommit {@id} form. Assemble merges the files of one
// record into a model.Record.
//
// # Writing
//
// Encode writes one file deterministically (fixed member order, two-space
// indent) in a Dialect: Spec (the schema document's form, "db:" prefix) or
// FlureeV4 (what a Fluree v4 reader accepts, "f:" prefix). It is lossless:
// given the file it replaces, members it does not know are written back
// unchanged, and a member whose value did not change keeps its bytes.
//
// docs/format.md describes every key, default and merge rule.
package jsonld

// Vocab is the ns@v2 vocabulary.
const Vocab = "https://ns.flur.ee/db#"

// ModelPrefix is the prefix of vocabulary IRIs in the model: a graph source
// of type https://ns.flur.ee/db#Bm25Index has source_type "db:Bm25Index",
// whatever prefix its file used.
const ModelPrefix = "db"
