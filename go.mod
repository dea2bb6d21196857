module nameservice.dev/nameservice

go 1.24
