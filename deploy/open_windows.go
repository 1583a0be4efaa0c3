package deploy

// noFollow is 0: Windows has no such flag; os.Root, through which the
// deploy opens every file, follows no link out of its folder.
const noFollow = 0
