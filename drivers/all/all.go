// Package all registers every built-in driver. Import it for its side
// effect when a program should accept any nameservice URL:
//
//	import _ "nameservice.dev/nameservice/drivers/all"
package all

import (
	_ "nameservice.dev/nameservice/drivers/blob"     // gs://, azblob://
	_ "nameservice.dev/nameservice/drivers/docstore" // docstore+mem://, docstore+dynamodb://, ...
	_ "nameservice.dev/nameservice/drivers/dynamodb" // dynamodb://
	_ "nameservice.dev/nameservice/drivers/fs"       // file://
	_ "nameservice.dev/nameservice/drivers/mem"      // mem://
	_ "nameservice.dev/nameservice/drivers/remote"   // http://, https:// (ns serve)
	_ "nameservice.dev/nameservice/drivers/s3etag"   // s3://
)
